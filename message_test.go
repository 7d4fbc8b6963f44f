package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func allParts() runlet.Message {
	return runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.TextPart{Text: "héllo \"world\" \u2028"},
		runlet.ReasoningPart{Text: "thinking", Signature: "sig==", Provider: "anthropic"},
		runlet.ReasoningPart{Encrypted: "gAAAA", ID: "rs_1", Provider: "openai"},
		runlet.ReasoningPart{Details: `[{"type":"reasoning.text","text":"t","signature":"s+/="}]`, Provider: "openrouter"},
		runlet.ToolCallPart{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":[1,2,{"b":"ü"}]}`), ItemID: "fc_1", Provider: "openai"},
		runlet.ToolResultPart{CallID: "c1", Name: "f", Content: "boom", IsError: true},
		runlet.ImagePart{MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0}, Detail: "low"},
		runlet.ImagePart{URL: "https://example.com/a.jpg"},
		runlet.FilePart{Name: "a.pdf", MediaType: "application/pdf", Data: []byte("%PDF")},
	}}
}

func TestMessageJSONRoundTrip(t *testing.T) {
	in := allParts()
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
	for _, typ := range []string{`"type":"text"`, `"type":"reasoning"`, `"type":"tool_call"`, `"type":"tool_result"`, `"type":"image"`, `"type":"file"`} {
		if !strings.Contains(string(b), typ) {
			t.Fatalf("%s missing in %s", typ, b)
		}
	}
}

func TestSignedPartsRoundTrip(t *testing.T) {
	in := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.TextPart{Text: "signed", Provider: "gemini", Signature: "CiQB/+="},
		runlet.ToolCallPart{ID: "c2", Name: "g", Arguments: json.RawMessage(`{}`), Provider: "gemini", Signature: "EpwI+/=="},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out runlet.Message
	if err := json.Unmarshal(b, &out); err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("%v: %s -> %+v", err, b, out)
	}
}

func TestToolCallWithInvalidArgumentsRoundTrips(t *testing.T) {
	in := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.ToolCallPart{ID: "c", Name: "f", Arguments: json.RawMessage(`{"city":"Par`)},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out runlet.Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("%s decoded to %+v", b, out)
	}
}

func TestMessageUnmarshalErrors(t *testing.T) {
	for _, in := range []string{`{"role":"user","parts":[{"type":"video"}]}`, `{"role":"user","parts":[{"type":"text","text":1}]}`, `{"role":`} {
		var m runlet.Message
		if err := json.Unmarshal([]byte(in), &m); err == nil {
			t.Fatalf("%s: no error", in)
		}
	}
}

func TestMessageHelpers(t *testing.T) {
	m := allParts()
	m.Parts = append(m.Parts, runlet.TextPart{Text: "!"})
	if got := m.Text(); got != "héllo \"world\" \u2028!" {
		t.Fatalf("Text() = %q", got)
	}
	if got := m.Reasoning(); got != "thinking" {
		t.Fatalf("Reasoning() = %q", got)
	}
	if calls := m.ToolCalls(); len(calls) != 1 || calls[0].ID != "c1" {
		t.Fatalf("ToolCalls() = %+v", calls)
	}
	if u := runlet.UserText("hi"); u.Role != runlet.RoleUser || u.Text() != "hi" {
		t.Fatalf("UserText = %+v", u)
	}
}

func TestEventsJSONRoundTrip(t *testing.T) {
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Rome"}`)),
		runlettest.TextReply("Warm."),
	)
	model.ChunkSize = 2
	var lines strings.Builder
	jsonl := runlet.NewJSONLObserver(&lines)
	rt := runlet.NewRuntime(runlet.WithObservers(jsonl), runlet.WithPreparers(runlet.KeepLastTurns(10)))
	evs, err := collect(t, rt.Stream(context.Background(), &runlet.Agent{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool()}}, "Rome?"))
	if err != nil || jsonl.Err() != nil {
		t.Fatal(err, jsonl.Err())
	}
	got := strings.Split(strings.TrimSpace(lines.String()), "\n")
	if len(got) != len(evs) {
		t.Fatalf("%d lines for %d events", len(got), len(evs))
	}
	seen := map[string]bool{}
	for i, line := range got {
		ev, err := runlet.UnmarshalEvent([]byte(line))
		if err != nil {
			t.Fatalf("line %d: %v: %s", i, err, line)
		}
		if ev.Header().Type != evs[i].Header().Type || ev.Header().Seq != evs[i].Header().Seq {
			t.Fatalf("line %d decoded as %s/%d", i, ev.Header().Type, ev.Header().Seq)
		}
		if !strings.HasPrefix(line, `{"type":"`+ev.Header().Type+`","run_id":"`) {
			t.Fatalf("line %d does not start with its type and run ID: %s", i, line)
		}
		again, _ := json.Marshal(ev)
		if string(again) != line {
			t.Fatalf("line %d does not round-trip:\n%s\n%s", i, line, again)
		}
		seen[ev.Header().Type] = true
	}
	for _, typ := range []string{"run.started", "state.changed", "context.prepared", "model.started", "text.delta", "tool_call.delta", "model.finished", "tool.started", "tool.finished", "run.finished"} {
		if !seen[typ] {
			t.Fatalf("no %s event", typ)
		}
	}
	if _, err := runlet.UnmarshalEvent([]byte(`{"type":"nope"}`)); err == nil {
		t.Fatal("unknown type accepted")
	}
}

func TestSecretsNeverInEvents(t *testing.T) {
	// A provider error whose cause mentions nothing secret, and a request
	// whose options hold only public settings: events carry the request and
	// error text, so adapters must keep keys out of both (tested per adapter);
	// here we check the runtime adds nothing of its own, e.g. from ctx values.
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "sk-secret-123")
	model := runlettest.NewModel(runlettest.ErrorReply(&runlet.ProviderError{Provider: "p", StatusCode: 401, Message: "invalid api key"}))
	var lines strings.Builder
	_, err := runlet.NewRuntime(runlet.WithObservers(runlet.NewJSONLObserver(&lines))).Run(ctx, &runlet.Agent{Model: model}, "hi")
	if err == nil || strings.Contains(lines.String(), "sk-secret") {
		t.Fatalf("err=%v events=%s", err, lines.String())
	}
}

func TestProviderErrorText(t *testing.T) {
	cases := []struct {
		err  *runlet.ProviderError
		want string
	}{
		{&runlet.ProviderError{Provider: "openai", StatusCode: 429, Type: "requests", Code: "rate_limit_exceeded", Message: "slow down"}, "openai: HTTP 429 (requests/rate_limit_exceeded) slow down"},
		{&runlet.ProviderError{Provider: "anthropic", Type: "overloaded_error", Message: "Overloaded"}, "anthropic: (overloaded_error) Overloaded"},
		{&runlet.ProviderError{Message: "stream ended", Err: runlet.ErrStreamIncomplete}, "stream ended: runlet: stream ended before completion"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if !errors.Is(cases[2].err, runlet.ErrStreamIncomplete) {
		t.Error("Unwrap")
	}
}

func TestTruncateOnRuneBoundary(t *testing.T) {
	tool := runlet.NewTool("t", "", func(ctx context.Context, _ struct{}) (string, error) { return strings.Repeat("é", 10), nil })
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c", "t", "")), runlettest.TextReply("ok"))
	res, err := runlet.NewRuntime(runlet.WithMaxToolOutput(5)).Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}, "go")
	if err != nil {
		t.Fatal(err)
	}
	got := res.Messages[2].Parts[0].(runlet.ToolResultPart).Content
	if !strings.HasPrefix(got, "éé\n[output truncated: showing 4 of 20 bytes]") {
		t.Fatalf("%q", got)
	}
}

func TestNewToolSchemaAndOutput(t *testing.T) {
	type in struct {
		Query string `json:"query" jsonschema:"what to look for"`
		Limit int    `json:"limit,omitempty"`
	}
	type out struct {
		Hits []string `json:"hits"`
	}
	tool := runlet.NewTool("search", "Search.", func(ctx context.Context, in in) (out, error) {
		return out{Hits: []string{in.Query}}, nil
	}, runlet.WithToolTimeout(time.Second))
	spec := tool.Spec()
	b, _ := json.Marshal(spec.InputSchema)
	if !strings.Contains(string(b), `"query"`) || !strings.Contains(string(b), "what to look for") || !strings.Contains(string(b), `"required":["query"]`) {
		t.Fatalf("schema %s", b)
	}
	if runlet.PolicyOf(tool).Timeout != time.Second {
		t.Fatal("timeout option lost")
	}
	s, err := tool.Call(context.Background(), json.RawMessage(`{"query":"go"}`))
	if err != nil || s != `{"hits":["go"]}` {
		t.Fatalf("%q %v", s, err)
	}
	var te *runlet.ToolError
	if _, err := tool.Call(context.Background(), json.RawMessage(`{"limit":1}`)); !errors.As(err, &te) || te.Kind != runlet.ToolInvalidArgs {
		t.Fatalf("missing required field: %v", err)
	}
	if _, err := runlet.NewToolE("", "", func(context.Context, in) (string, error) { return "", nil }); err == nil {
		t.Fatal("empty name accepted")
	}
}

// TestCheckpointJSONStable pins the JSON of a checkpoint (messages with
// every part type, a call with cut-off arguments, results and pending
// calls): testdata/checkpoint.json was written by the release before the
// parts lost their own MarshalJSON methods, and stores hold such JSON.
func TestCheckpointJSONStable(t *testing.T) {
	msgs := []runlet.Message{
		{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.TextPart{Text: "a<b>&", ItemID: "i"}, runlet.ImagePart{URL: "u", Data: []byte{1, 2}}, runlet.FilePart{Name: "f", Data: []byte("x")}}},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ReasoningPart{Text: "r", Signature: "s", Details: `[{"a":1}]`}, runlet.ToolCallPart{ID: "c", Name: "n", Arguments: json.RawMessage(`{"x": 1}`)}, runlet.ToolCallPart{ID: "d", Name: "n", Arguments: json.RawMessage(`{"x": `)}, runlet.ToolCallPart{ID: "e"}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c", Content: "ok", IsError: true}}},
		{Role: runlet.RoleUser},
		{Role: runlet.RoleUser, Parts: []runlet.Part{}},
	}
	cp := &runlet.Checkpoint{RunID: "r", Messages: msgs, History: msgs[:1], Results: []runlet.ToolResultPart{{CallID: "c", Content: "x"}}, Pending: []runlet.ToolCallPart{{ID: "d", Arguments: json.RawMessage("{")}}, CreatedAt: time.Unix(0, 0).UTC()}
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/checkpoint.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Fatalf("checkpoint JSON changed:\n got %s\nwant %s", b, want)
	}
	var back runlet.Checkpoint
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(&back); string(b2) != string(want) {
		t.Fatalf("checkpoint JSON does not round-trip:\n got %s\nwant %s", b2, want)
	}
}
