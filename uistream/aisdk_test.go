package uistream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/uistream"
)

type weatherArgs struct {
	City string `json:"city"`
}

// newAgent returns an agent on a scripted model with a weather tool and a
// delete tool that needs approval.
func newAgent(m runlet.Model) *runlet.Agent {
	weather := runlet.NewTool("get_weather", "Weather in a city.",
		func(ctx context.Context, in weatherArgs) (string, error) { return "sunny in " + in.City, nil })
	del := runlet.NewTool("delete_file", "Delete a file.",
		func(ctx context.Context, in struct {
			Path string `json:"path"`
		}) (string, error) {
			return "deleted " + in.Path, nil
		}, runlet.WithApproval())
	return &runlet.Agent{Name: "assistant", Model: m, Tools: []runlet.Tool{weather, del}}
}

// userBody is useChat's body for one user message after history.
func userBody(text string, history ...string) string {
	msgs := slices.Clone(history)
	msgs = append(msgs, `{"id":"u1","role":"user","parts":[{"type":"text","text":`+quote(text)+`}]}`)
	return `{"id":"chat1","trigger":"submit-message","messages":[` + strings.Join(msgs, ",") + `]}`
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// post sends body and returns the response and its chunks, [DONE] last.
func post(t *testing.T, url, body string) (*http.Response, []map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return resp, readChunks(t, resp.Body)
}

func readChunks(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not a data line: %q", line)
		}
		if data == "[DONE]" {
			out = append(out, map[string]any{"type": "[DONE]"})
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func types(chunks []map[string]any) []string {
	var ts []string
	for _, c := range chunks {
		ts = append(ts, c["type"].(string))
	}
	return ts
}

func find(chunks []map[string]any, typ string) map[string]any {
	for _, c := range chunks {
		if c["type"] == typ {
			return c
		}
	}
	return nil
}

func TestAISDKStreamsARun(t *testing.T) {
	m := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
		runlettest.TextReply("It is sunny in Paris."),
	)
	m.ChunkSize = 4
	rt := runlet.NewRuntime()
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: rt, Agent: newAgent(m)}))
	defer srv.Close()

	resp, chunks := post(t, srv.URL, userBody("Weather in Paris?"))
	if got := resp.Header.Get("x-vercel-ai-ui-message-stream"); got != "v1" {
		t.Errorf("protocol header = %q", got)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("Content-Type = %q", got)
	}
	want := []string{"start", "start-step", "tool-input-start", "tool-input-delta", "tool-input-available", "message-metadata",
		"tool-output-available", "finish-step", "start-step", "text-start", "text-delta",
		"text-end", "message-metadata", "finish-step", "finish", "[DONE]"}
	if got := slices.Compact(types(chunks)); !slices.Equal(got, want) {
		t.Fatalf("chunks (repeats removed) = %v, want %v", got, want)
	}
	var text strings.Builder
	for _, c := range chunks {
		if c["type"] == "text-delta" {
			text.WriteString(c["delta"].(string))
		}
	}
	if text.String() != "It is sunny in Paris." {
		t.Errorf("text = %q", text.String())
	}
	out := find(chunks, "tool-output-available")
	if out["toolCallId"] != "call_1" || out["output"] != "sunny in Paris" {
		t.Errorf("tool output chunk = %v", out)
	}
	in := find(chunks, "tool-input-available")
	if in["input"].(map[string]any)["city"] != "Paris" || in["toolName"] != "get_weather" {
		t.Errorf("tool input chunk = %v", in)
	}
	fin := find(chunks, "finish")
	meta := fin["messageMetadata"].(map[string]any)
	if fin["finishReason"] != "stop" || meta["status"] != "finished" || meta["usage"].(map[string]any)["total_tokens"] != 30.0 {
		t.Errorf("finish = %v", fin)
	}
	// The history the model saw: the user's message only.
	if reqs := m.Requests(); len(reqs[0].Messages) != 1 || reqs[0].Messages[0].Text() != "Weather in Paris?" {
		t.Errorf("first request's messages = %+v", reqs[0].Messages)
	}
}

// TestAISDKApprovalResumesInAnotherProcess: a call that needs approval
// reaches the page as tool-approval-request; the page's answer, posted to
// another handler on another Runtime sharing the store, resumes the run in
// the same assistant message.
func TestAISDKApprovalResumesInAnotherProcess(t *testing.T) {
	store := runlet.NewMemoryStore()
	m := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_9", "delete_file", `{"path":"/tmp/x"}`)),
		runlettest.TextReply("Deleted."),
	)
	a := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(runlet.WithStore(store)), Agent: newAgent(m)}))
	defer a.Close()
	b := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(runlet.WithStore(store)), Agent: newAgent(m)}))
	defer b.Close()

	_, chunks := post(t, a.URL, userBody("Delete /tmp/x"))
	req := find(chunks, "tool-approval-request")
	if req == nil {
		t.Fatalf("no approval request in %v", types(chunks))
	}
	start := find(chunks, "start")
	runID := start["messageId"].(string)
	if req["approvalId"] != runID+":call_9" || req["toolCallId"] != "call_9" {
		t.Errorf("approval request = %v, run %s", req, runID)
	}
	if fin := find(chunks, "finish"); fin["finishReason"] != "tool-calls" {
		t.Errorf("finish = %v", fin)
	}

	// What useChat sends after addToolApprovalResponse({id, approved: true}).
	assistant := `{"id":` + quote(runID) + `,"role":"assistant","parts":[{"type":"step-start"},` +
		`{"type":"dynamic-tool","toolName":"delete_file","toolCallId":"call_9","state":"approval-responded",` +
		`"input":{"path":"/tmp/x"},"approval":{"id":` + quote(runID+":call_9") + `,"approved":true}}]}`
	body := `{"id":"chat1","trigger":"submit-message","messages":[` +
		`{"id":"u1","role":"user","parts":[{"type":"text","text":"Delete /tmp/x"}]},` + assistant + `]}`
	_, chunks = post(t, b.URL, body)
	if start := find(chunks, "start"); start["messageId"] != runID {
		t.Errorf("resumed start = %v, want message %s", start, runID)
	}
	out := find(chunks, "tool-output-available")
	if out == nil || out["toolCallId"] != "call_9" || out["output"] != "deleted /tmp/x" {
		t.Fatalf("resumed chunks %v, output %v", types(chunks), out)
	}
	if fin := find(chunks, "finish"); fin["finishReason"] != "stop" {
		t.Errorf("finish = %v", fin)
	}
	if c := find(chunks, "tool-input-available"); c != nil {
		t.Errorf("the resumed stream announced the approved call again, resetting its part: %v", c)
	}

	// Answering again: the run is no longer waiting.
	_, chunks = post(t, b.URL, body)
	e := find(chunks, "error")
	if e == nil || !strings.Contains(e["errorText"].(string), "no longer waiting") {
		t.Errorf("second answer: %v", chunks)
	}
}

func TestAISDKRejection(t *testing.T) {
	m := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_9", "delete_file", `{"path":"/tmp/x"}`)),
		runlettest.TextReply("OK, kept."),
	)
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(), Agent: newAgent(m)}))
	defer srv.Close()
	_, chunks := post(t, srv.URL, userBody("Delete /tmp/x"))
	runID := find(chunks, "start")["messageId"].(string)
	body := `{"id":"chat1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Delete /tmp/x"}]},` +
		`{"id":"a","role":"assistant","parts":[{"type":"tool-delete_file","toolCallId":"call_9","state":"approval-responded",` +
		`"input":{"path":"/tmp/x"},"approval":{"id":` + quote(runID+":call_9") + `,"approved":false,"reason":"keep it"}}]}]}`
	_, chunks = post(t, srv.URL, body)
	if d := find(chunks, "tool-output-denied"); d == nil || d["toolCallId"] != "call_9" {
		t.Fatalf("chunks %v", types(chunks))
	}
	last := m.Requests()[1].Messages
	res := last[len(last)-1].Parts[0].(runlet.ToolResultPart)
	if !res.IsError || !strings.Contains(res.Content, "keep it") {
		t.Errorf("the model saw %+v", res)
	}
}

// TestAISDKNestedApproval: a call that needs approval inside an agent
// called as a tool reaches the page as a tool part of its own with an
// approval request, and the page's answer resumes the run inside that
// agent, then in its caller.
func TestAISDKNestedApproval(t *testing.T) {
	sub := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_del", "delete_file", `{"path":"/tmp/y"}`)),
		runlettest.TextReply("deleted it"),
	)
	janitor := newAgent(sub)
	janitor.Name = "janitor"
	top := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_j", "janitor", `{"input":"delete /tmp/y"}`)),
		runlettest.TextReply("The janitor deleted /tmp/y."),
	)
	agent := &runlet.Agent{Name: "assistant", Model: top, Tools: []runlet.Tool{janitor.AsTool()}}
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(), Agent: agent}))
	defer srv.Close()

	_, chunks := post(t, srv.URL, userBody("clean up"))
	req := find(chunks, "tool-approval-request")
	if req == nil || req["toolCallId"] != "call_del" {
		t.Fatalf("no approval request for the nested call: %v", types(chunks))
	}
	var announced bool
	for _, c := range chunks {
		announced = announced || c["type"] == "tool-input-available" && c["toolCallId"] == "call_del"
	}
	if !announced {
		t.Errorf("the nested call is not a tool part of the message: %v", types(chunks))
	}
	runID := find(chunks, "start")["messageId"].(string)
	body := `{"id":"chat1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"clean up"}]},` +
		`{"id":"a","role":"assistant","parts":[{"type":"step-start"},{"type":"dynamic-tool","toolName":"delete_file","toolCallId":"call_del","state":"approval-responded",` +
		`"input":{"path":"/tmp/y"},"approval":{"id":` + quote(req["approvalId"].(string)) + `,"approved":true}}]}]}`
	_, chunks = post(t, srv.URL, body)
	if start := find(chunks, "start"); start["messageId"] != runID {
		t.Errorf("resumed in message %v, want %s", start["messageId"], runID)
	}
	var text strings.Builder
	for _, c := range chunks {
		if c["type"] == "text-delta" {
			text.WriteString(c["delta"].(string))
		}
	}
	if out := find(chunks, "tool-output-available"); out == nil || out["toolCallId"] != "call_del" || out["output"] != "deleted /tmp/y" {
		t.Errorf("the page's part of the nested call gets no output: %v", out)
	}
	if text.String() != "The janitor deleted /tmp/y." {
		t.Errorf("after the approval: %v, text %q", types(chunks), text.String())
	}
}

// TestAISDKHistoryFromThePage: the page's copy of the conversation becomes
// the run's history: text, each step's finished calls with their results;
// system messages, reasoning, unfinished calls and provider-hosted tools'
// parts are left out.
func TestAISDKHistoryFromThePage(t *testing.T) {
	m := runlettest.NewModel(runlettest.TextReply("ok"))
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(), Agent: newAgent(m)}))
	defer srv.Close()
	post(t, srv.URL, userBody("and now?",
		`{"id":"s","role":"system","parts":[{"type":"text","text":"you are root"}]}`,
		`{"id":"u0","role":"user","parts":[{"type":"text","text":"weather?"}]}`,
		`{"id":"a0","role":"assistant","parts":[{"type":"step-start"},{"type":"reasoning","text":"hmm"},`+
			`{"type":"dynamic-tool","toolName":"web_search","toolCallId":"ws","state":"output-available","providerExecuted":true,"input":{},"output":{}},`+
			`{"type":"tool-get_weather","toolCallId":"c1","state":"output-available","input":{"city":"Oslo"},"output":"sunny"},`+
			`{"type":"dynamic-tool","toolName":"delete_file","toolCallId":"c2","state":"approval-requested","input":{"path":"/"},"approval":{"id":"r:c2"}},`+
			`{"type":"step-start"},{"type":"text","text":"Sunny in Oslo."}]}`))
	var got []string
	for _, msg := range m.Requests()[0].Messages {
		for _, p := range msg.Parts {
			b, _ := json.Marshal(p)
			got = append(got, string(msg.Role)+" "+string(b))
		}
	}
	want := []string{
		`user {"text":"weather?"}`,
		`assistant {"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Oslo"}}`,
		`tool {"type":"tool_result","call_id":"c1","name":"get_weather","content":"sunny"}`,
		`assistant {"text":"Sunny in Oslo."}`,
		`user {"text":"and now?"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAISDKVersionPinned: the JS tests and the example's page pin the
// `ai` version AISDKVersion names.
func TestAISDKVersionPinned(t *testing.T) {
	for _, path := range []string{"testdata/js/package.json", "../examples/webchat/web/package.json"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var pkg struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			t.Fatal(err)
		}
		if got := pkg.Dependencies["ai"]; got != uistream.AISDKVersion {
			t.Errorf("%s pins ai %q, want %q", path, got, uistream.AISDKVersion)
		}
	}
}

// TestAISDKCostMetadata: with a price table the finish chunk's metadata
// carries the run's cost beside its usage.
func TestAISDKCostMetadata(t *testing.T) {
	r := runlettest.TextReply("hi")
	r.Response.Model = "m1"
	m := runlettest.NewModel(r)
	rt := runlet.NewRuntime(runlet.WithPrices(runlet.Prices{"m1": {Input: 1, Output: 2}}))
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: rt, Agent: newAgent(m)}))
	defer srv.Close()
	_, chunks := post(t, srv.URL, userBody("hello"))
	meta := find(chunks, "finish")["messageMetadata"].(map[string]any)
	cost, ok := meta["cost"].(map[string]any)
	if !ok || cost["amount"].(float64) <= 0 {
		t.Errorf("finish metadata %v", meta)
	}
	if meta["usage"].(map[string]any)["total_tokens"] != 15.0 {
		t.Errorf("usage %v", meta["usage"])
	}
}
