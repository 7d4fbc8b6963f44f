package runlet_test

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// hostedMessage is an assistant message as a hosted web search leaves it:
// the search, then text citing what it found.
func hostedMessage() runlet.Message {
	return runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.HostedToolPart{ID: "srvtoolu_1", Kind: runlet.HostedWebSearch, Name: "web_search",
			Input:    json.RawMessage(`{"query":"go 1.26"}`),
			Sources:  []runlet.Citation{{URL: "https://go.dev/doc/go1.26", Title: "Go 1.26 Release Notes"}},
			Provider: "anthropic",
			Raw:      json.RawMessage(`[{"type":"server_tool_use","id":"srvtoolu_1"},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"encrypted_content":"Eo8B+/=="}]}]`)},
		runlet.TextPart{Text: "Go 1.26 is out.", Citations: []runlet.Citation{{
			URL: "https://go.dev/doc/go1.26", Title: "Go 1.26 Release Notes", CitedText: "Go 1.26 is released", Start: 0, End: 9,
			Provider: "anthropic", Raw: json.RawMessage(`{"type":"web_search_result_location","encrypted_index":"Eo8B"}`)}}},
		runlet.HostedToolPart{Kind: runlet.HostedCodeExecution, Name: "executableCode", Input: json.RawMessage(`{"code":"print(1)"}`), Output: "1\n", IsError: true},
	}}
}

func TestHostedPartsJSONRoundTrip(t *testing.T) {
	in := hostedMessage()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out runlet.Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip changed the message:\n%+v\n%+v", in, out)
	}
	if !strings.Contains(string(b), `"type":"hosted_tool"`) || !strings.Contains(string(b), `"encrypted_index":"Eo8B"`) {
		t.Fatalf("JSON lacks the hosted tool or the raw citation: %s", b)
	}
}

func TestHostedToolPartText(t *testing.T) {
	got := hostedMessage().Parts[0].(runlet.HostedToolPart).Text()
	want := "[hosted tool web_search {\"query\":\"go 1.26\"}]\n- Go 1.26 Release Notes https://go.dev/doc/go1.26"
	if got != want {
		t.Fatalf("Text() = %q, want %q", got, want)
	}
	got = hostedMessage().Parts[2].(runlet.HostedToolPart).Text()
	if want := "[hosted tool code_execution {\"code\":\"print(1)\"}] failed\n1\n"; got != want {
		t.Fatalf("Text() = %q, want %q", got, want)
	}
}

func TestCitationSpan(t *testing.T) {
	text := "Go 1.26 is out."
	for _, tc := range []struct {
		c    runlet.Citation
		want string
	}{
		{runlet.Citation{Start: 0, End: 7}, "Go 1.26"},
		{runlet.Citation{}, text},                  // the whole part
		{runlet.Citation{Start: 3, End: 99}, text}, // offsets that do not fit
		{runlet.Citation{Start: 5, End: 2}, text},
	} {
		if got := tc.c.Span(text); got != tc.want {
			t.Errorf("%+v.Span = %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestPriceCostWebSearch(t *testing.T) {
	p := runlet.Price{Input: 3, Output: 15, WebSearch: 10,
		LongContextAbove: 100, LongContext: &runlet.Price{Input: 6, Output: 30}}
	u := runlet.Usage{InputTokens: 50, OutputTokens: 10, WebSearchRequests: 3}
	want := (50*3+10*15)/1e6 + 3*10/1e3
	if got := p.Cost(u); math.Abs(got-want) > 1e-12 {
		t.Fatalf("Cost = %v, want %v", got, want)
	}
	u.InputTokens = 200 // long context: searches keep their price
	want = (200*6+10*30)/1e6 + 3*10/1e3
	if got := p.Cost(u); math.Abs(got-want) > 1e-12 {
		t.Fatalf("long-context Cost = %v, want %v", got, want)
	}
	if got := u.Add(u).WebSearchRequests; got != 6 {
		t.Fatalf("Add: %d web searches, want 6", got)
	}
}

// TestHostedToolsInRun: the agent's hosted tools reach every request, the
// response's hosted parts become HostedToolFinished events and stay in the
// history, and their searches are counted in the run's usage.
func TestHostedToolsInRun(t *testing.T) {
	msg := hostedMessage()
	m := runlettest.NewModel(runlettest.Reply{Response: &runlet.ModelResponse{
		Message: msg, FinishReason: runlet.FinishStop,
		Usage: runlet.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, WebSearchRequests: 1},
	}})
	agent := &runlet.Agent{Name: "a", Model: m, HostedTools: []runlet.HostedTool{runlet.WebSearch(),
		{Provider: "anthropic", Declaration: json.RawMessage(`{"type":"web_fetch_20250910","name":"web_fetch"}`)}}}
	var hosted []runlet.HostedToolPart
	var res *runlet.Result
	for ev, err := range runlet.NewRuntime().Stream(context.Background(), agent, "news?") {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *runlet.HostedToolFinished:
			hosted = append(hosted, ev.Part)
		case *runlet.RunFinished:
			res = ev.Result
		}
	}
	if len(hosted) != 2 || !reflect.DeepEqual(hosted[0], msg.Parts[0]) || !reflect.DeepEqual(hosted[1], msg.Parts[2]) {
		t.Fatalf("HostedToolFinished events: %+v", hosted)
	}
	if got := m.Requests()[0].HostedTools; !reflect.DeepEqual(got, agent.HostedTools) {
		t.Fatalf("request's hosted tools = %+v, want %+v", got, agent.HostedTools)
	}
	if res == nil || res.Usage.WebSearchRequests != 1 || res.Output != "Go 1.26 is out." {
		t.Fatalf("result: %+v", res)
	}
	if last := res.Messages[len(res.Messages)-1]; !reflect.DeepEqual(last, msg) {
		t.Fatalf("history lost the hosted parts: %+v", last)
	}
}
