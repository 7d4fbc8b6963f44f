package runlettest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/openapitest"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

func ExampleNewOpenAIResponsesServer() {
	srv := runlettest.NewOpenAIResponsesServer(
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{
			runlettest.ResponsesReasoning("opaque", "The user wants a greeting."),
			runlettest.ResponsesText("Hello!"),
		}},
	)
	defer srv.Close()
	srv.ChunkSize = 2 // stream "He", "ll", "o!"

	model := openai.NewResponses(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-5"})
	req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("Say hello.")}}
	for ev, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Kind {
		case runlet.StreamTextDelta:
			fmt.Printf("delta %q\n", ev.Delta)
		case runlet.StreamDone:
			fmt.Println("reasoning:", ev.Response.Message.Reasoning())
			fmt.Println("answer:", ev.Response.Message.Text(), ev.Response.FinishReason)
		}
	}
	fmt.Println("request model:", srv.Requests()[0].JSON()["model"])
	// Output:
	// delta "He"
	// delta "ll"
	// delta "o!"
	// reasoning: The user wants a greeting.
	// answer: Hello! stop
	// request model: gpt-5
}

func respPost(t *testing.T, srv *runlettest.OpenAIResponsesServer, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(srv.BaseURL()+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type respSSE struct {
	name string
	data []byte
}

func respReadSSE(t *testing.T, r io.Reader) []respSSE {
	t.Helper()
	var out []respSSE
	var cur respSSE
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != nil {
				out = append(out, cur)
			}
			cur = respSSE{}
		case strings.HasPrefix(line, "event: "):
			cur.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = []byte(line[6:])
		default:
			t.Errorf("unexpected line %q", line)
		}
	}
	return out
}

var respTurns = []runlettest.ResponsesTurn{
	{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Hello, world.")}},
	{Items: []runlettest.ResponsesItem{runlettest.ResponsesRefusal("I can't help with that.")}},
	{Items: []runlettest.ResponsesItem{
		runlettest.ResponsesReasoning("enc", "Part one.", "Part two."),
		runlettest.ResponsesReasoning("enc2"),
		runlettest.ResponsesFunctionCall("get_weather", `{"city":"Paris"}`),
		runlettest.ResponsesFunctionCall("now", ""),
	}, Usage: runlettest.ResponsesUsage{InputTokens: 10, OutputTokens: 20, ReasoningTokens: 5, CachedTokens: 2}},
	{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Cut")}, Incomplete: "max_output_tokens"},
	{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Oops")}, Fail: &runlettest.ResponsesError{Code: "server_error", Message: "boom"}},
	{},
}

// respEventSchemas names the OpenAPI schema of each event type the fake sends.
var respEventSchemas = map[string]string{
	"response.created":                       "ResponseCreatedEvent",
	"response.in_progress":                   "ResponseInProgressEvent",
	"response.output_item.added":             "ResponseOutputItemAddedEvent",
	"response.output_item.done":              "ResponseOutputItemDoneEvent",
	"response.content_part.added":            "ResponseContentPartAddedEvent",
	"response.content_part.done":             "ResponseContentPartDoneEvent",
	"response.output_text.delta":             "ResponseTextDeltaEvent",
	"response.output_text.done":              "ResponseTextDoneEvent",
	"response.refusal.delta":                 "ResponseRefusalDeltaEvent",
	"response.refusal.done":                  "ResponseRefusalDoneEvent",
	"response.function_call_arguments.delta": "ResponseFunctionCallArgumentsDeltaEvent",
	"response.function_call_arguments.done":  "ResponseFunctionCallArgumentsDoneEvent",
	"response.reasoning_summary_part.added":  "ResponseReasoningSummaryPartAddedEvent",
	"response.reasoning_summary_part.done":   "ResponseReasoningSummaryPartDoneEvent",
	"response.reasoning_summary_text.delta":  "ResponseReasoningSummaryTextDeltaEvent",
	"response.reasoning_summary_text.done":   "ResponseReasoningSummaryTextDoneEvent",
	"response.completed":                     "ResponseCompletedEvent",
	"response.incomplete":                    "ResponseIncompleteEvent",
	"response.failed":                        "ResponseFailedEvent",
	"error":                                  "ResponseErrorEvent",
}

// The fake speaks the documented protocol: every body validates against the
// OpenAPI schema Response and every event against ResponseStreamEvent,
// with increasing sequence numbers, created first and one terminal event
// last.
func TestOpenAIResponsesServerMatchesSchema(t *testing.T) {
	for i, turn := range respTurns {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			srv := runlettest.NewOpenAIResponsesServer(turn, turn)
			defer srv.Close()
			srv.ChunkSize = 3
			const req = `{"model":"gpt-5","input":"hi","include":["reasoning.encrypted_content"]%s}`

			resp := respPost(t, srv, fmt.Sprintf(req, ""))
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d %s", resp.StatusCode, body)
			}
			openapitest.Validate(t, "Response", body)

			resp = respPost(t, srv, fmt.Sprintf(req, `,"stream":true`))
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("content type %q", ct)
			}
			events := respReadSSE(t, resp.Body)
			if len(events) < 3 {
				t.Fatalf("%d events", len(events))
			}
			for j, ev := range events {
				schema, ok := respEventSchemas[ev.name]
				if !ok {
					t.Errorf("event %q is not one the fake should send", ev.name)
				}
				openapitest.Validate(t, schema, ev.data)
				openapitest.Validate(t, "ResponseStreamEvent", ev.data)
				var head struct {
					Type string `json:"type"`
					Seq  int    `json:"sequence_number"`
				}
				json.Unmarshal(ev.data, &head)
				if head.Type != ev.name || head.Seq != j {
					t.Errorf("event %d: name %q type %q seq %d", j, ev.name, head.Type, head.Seq)
				}
			}
			if events[0].name != "response.created" {
				t.Errorf("first event %q", events[0].name)
			}
			last := events[len(events)-1].name
			wantLast := map[string]string{"": "response.completed", "max_output_tokens": "response.incomplete"}[turn.Incomplete]
			if turn.Fail != nil {
				wantLast = "response.failed"
				if events[len(events)-2].name != "error" {
					t.Errorf("no error event before response.failed")
				}
			}
			if last != wantLast {
				t.Errorf("last event %q, want %q", last, wantLast)
			}
		})
	}
}

// Like the API, the fake returns encrypted reasoning only when asked.
func TestOpenAIResponsesServerEncryptedContent(t *testing.T) {
	turn := runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesReasoning("secret-state", "Thinking.")}}
	srv := runlettest.NewOpenAIResponsesServer(turn, turn)
	defer srv.Close()
	for _, include := range []bool{false, true} {
		req := `{"model":"m","input":"hi"}`
		if include {
			req = `{"model":"m","input":"hi","include":["reasoning.encrypted_content"]}`
		}
		body, _ := io.ReadAll(respPost(t, srv, req).Body)
		if got := strings.Contains(string(body), "secret-state"); got != include {
			t.Errorf("include %v: encrypted content present %v: %s", include, got, body)
		}
	}
}

// The fake rejects reasoning input items the API rejects, with its messages.
func TestOpenAIResponsesServerChecksReasoningInput(t *testing.T) {
	tests := []struct {
		input, want string
	}{
		{`[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"},{"role":"assistant","content":"hi"}]`,
			"Item 'rs_1' of type 'reasoning' was provided without its required following item."},
		{`[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{}"}]`,
			"Item with id 'rs_1' not found. Items are not persisted when `store` is set to false."},
		{`[{"type":"reasoning","summary":[],"encrypted_content":"e"}]`, "Missing required parameter: 'input[0].id'."},
		{`[{"type":"reasoning","id":"rs_1","encrypted_content":"e"}]`, "Missing required parameter: 'input[0].summary'."},
	}
	srv := runlettest.NewOpenAIResponsesServer()
	defer srv.Close()
	for _, tt := range tests {
		resp := respPost(t, srv, `{"model":"m","store":false,"input":`+tt.input+`}`)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s: %d %s", tt.input, resp.StatusCode, body)
		}
	}
	// Stored items may be referenced by ID alone.
	srv.Enqueue(runlettest.ResponsesTurn{})
	resp := respPost(t, srv, `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{}"}]}`)
	if resp.StatusCode != 200 {
		t.Errorf("stored reference: %d", resp.StatusCode)
	}
}

func TestOpenAIResponsesServerScriptAndFaults(t *testing.T) {
	srv := runlettest.NewOpenAIResponsesServer(runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("abcdefghij")}})
	defer srv.Close()
	srv.ChunkSize = 1
	srv.InjectFault(
		runlettest.Fault{Status: 503, Header: http.Header{"Retry-After": {"1"}}, Body: "busy"},
		runlettest.Fault{Truncate: true, AfterEvents: 5},
	)
	resp := respPost(t, srv, `{"model":"m","input":"hi","stream":true}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || string(body) != "busy" || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("status fault: %d %q", resp.StatusCode, body)
	}
	events := respReadSSE(t, respPost(t, srv, `{"model":"m","input":"hi","stream":true}`).Body)
	if len(events) != 5 {
		t.Errorf("truncated stream has %d events, want 5", len(events))
	}
	// The script is used up: a clear 400, not a hang.
	resp = respPost(t, srv, `{"model":"m","input":"hi"}`)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "no scripted response left") {
		t.Errorf("exhausted script: %d %s", resp.StatusCode, body)
	}
	resp = respPost(t, srv, `not json`)
	if resp.StatusCode != 400 {
		t.Errorf("bad JSON: %d", resp.StatusCode)
	}
	r, _ := http.Get(srv.BaseURL() + "/responses")
	if r.StatusCode != 404 {
		t.Errorf("GET: %d", r.StatusCode)
	}
	r.Body.Close()
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("%d requests recorded, want 5", n)
	}
}
