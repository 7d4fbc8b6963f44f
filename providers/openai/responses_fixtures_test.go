package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/openapitest"
	"github.com/runlet/runlet/modelkit"
)

// Conformance against recorded Responses API traffic in
// testdata/responses/fixtures (see testdata/responses/PROVENANCE.md). Every
// file there is used by one of the tests below; TestResponsesFixturesAllUsed
// keeps it that way.

const respFixtureDir = "testdata/responses/fixtures"

// respFixturesUsed collects the fixture files the tests read.
var respFixturesUsed = map[string]bool{}

func respFixture(t testing.TB, name string) []byte {
	t.Helper()
	respFixturesUsed[name] = true
	b, err := os.ReadFile(filepath.Join(respFixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// respJSONLToSSE turns a .chunks.jsonl file (one data payload per line) into
// an event stream, one data event per line.
func respJSONLToSSE(b []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		out.WriteString("data: ")
		out.Write(line)
		out.WriteString("\n\n")
	}
	return out.Bytes()
}

// respServe answers every request with the status, content type and body,
// and records request bodies.
func respServe(t testing.TB, status int, contentType string, body []byte) (*httptest.Server, *[][]byte) {
	t.Helper()
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		buf.ReadFrom(r.Body)
		bodies = append(bodies, buf.Bytes())
		rw.Header().Set("Content-Type", contentType)
		rw.WriteHeader(status)
		rw.Write(body)
	}))
	t.Cleanup(func() {
		srv.Close()
		// Every request the adapter sent in the test is a valid CreateResponse.
		for _, b := range bodies {
			respValidate(t, b)
		}
	})
	return srv, &bodies
}

func respModel(baseURL string) *Responses {
	return NewResponses(Config{BaseURL: baseURL, APIKey: "sk-test-secret-key", Model: "gpt-test", MaxRetries: -1})
}

// respCollected is a drained stream: the deltas by kind and the final response.
type respCollected struct {
	text, reasoning string
	textEvents      int
	reasoningEvents int
	calls           map[int]*respCollectedCall
	callOrder       []int
	done            *runlet.ModelResponse
	afterDone       int // events after StreamDone (must be 0)
	acc             modelkit.Accumulator
}

type respCollectedCall struct {
	id, name, args string
	events         int
	announced      int // deltas carrying ID and name
}

func respDrain(t testing.TB, seq func(func(runlet.StreamEvent, error) bool)) (*respCollected, error) {
	t.Helper()
	c := &respCollected{calls: map[int]*respCollectedCall{}}
	var err error
	seq(func(ev runlet.StreamEvent, e error) bool {
		if e != nil {
			err = e
			return false
		}
		if c.done != nil {
			c.afterDone++
		}
		c.acc.Add(ev)
		switch ev.Kind {
		case runlet.StreamTextDelta:
			c.text += ev.Delta
			c.textEvents++
		case runlet.StreamReasoningDelta:
			c.reasoning += ev.Delta
			c.reasoningEvents++
		case runlet.StreamToolCallDelta:
			call := c.calls[ev.Index]
			if call == nil {
				call = &respCollectedCall{}
				c.calls[ev.Index] = call
				c.callOrder = append(c.callOrder, ev.Index)
			}
			if ev.ID != "" {
				call.id = ev.ID
			}
			if ev.Name != "" {
				call.name = ev.Name
			}
			if ev.ID != "" && ev.Name != "" {
				call.announced++
			}
			call.args += ev.Delta
			call.events++
		case runlet.StreamDone:
			c.done = ev.Response
		}
		return true
	})
	if err == nil && c.done == nil {
		t.Fatal("stream ended without StreamDone or error")
	}
	if c.afterDone != 0 {
		t.Errorf("%d events after StreamDone", c.afterDone)
	}
	return c, err
}

// respWantPart describes an expected part of the assembled message.
type respWantPart struct {
	kind string // "text", "reasoning", "call"
	// text: exact text, or (for long texts) prefix/suffix/rune count
	text           string
	prefix, suffix string
	runes          int
	// reasoning
	id, encPrefix, encSuffix string
	encLen                   int
	// call
	callID, name, args, itemID string
}

type respWantResponse struct {
	id, model string
	finish    runlet.FinishReason
	usage     runlet.Usage
	parts     []respWantPart
}

func respCheckText(t *testing.T, what, got string, w respWantPart) {
	t.Helper()
	if w.runes == 0 {
		if got != w.text {
			t.Errorf("%s = %q, want %q", what, got, w.text)
		}
		return
	}
	if n := utf8.RuneCountInString(got); n != w.runes || !strings.HasPrefix(got, w.prefix) || !strings.HasSuffix(got, w.suffix) {
		t.Errorf("%s: %d runes %q...%q, want %d runes %q...%q", what, n, respClip(got, 40), respTail(got, 40), w.runes, w.prefix, w.suffix)
	}
}

func respClip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func respTail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func respCheckResponse(t *testing.T, got *runlet.ModelResponse, want respWantResponse) {
	t.Helper()
	if got.ID != want.id || got.Model != want.model || got.FinishReason != want.finish {
		t.Errorf("id, model, finish = %q, %q, %q; want %q, %q, %q", got.ID, got.Model, got.FinishReason, want.id, want.model, want.finish)
	}
	want.usage.Requests = 1
	if got.Usage != want.usage {
		t.Errorf("usage = %+v, want %+v", got.Usage, want.usage)
	}
	if got.Message.Role != runlet.RoleAssistant {
		t.Errorf("role = %q", got.Message.Role)
	}
	if len(got.Message.Parts) != len(want.parts) {
		t.Fatalf("parts = %d %#v, want %d", len(got.Message.Parts), respKinds(got.Message.Parts), len(want.parts))
	}
	for i, w := range want.parts {
		switch p := got.Message.Parts[i].(type) {
		case runlet.TextPart:
			if w.kind != "text" {
				t.Errorf("part %d is text, want %s", i, w.kind)
				continue
			}
			respCheckText(t, "text", p.Text, w)
		case runlet.ReasoningPart:
			if w.kind != "reasoning" {
				t.Errorf("part %d is reasoning, want %s", i, w.kind)
				continue
			}
			respCheckText(t, "reasoning text", p.Text, w)
			if p.ID != w.id || p.Provider != "openai" || p.Signature != "" {
				t.Errorf("reasoning id, provider, signature = %q, %q, %q; want %q, openai, empty", p.ID, p.Provider, p.Signature, w.id)
			}
			if len(p.Encrypted) != w.encLen || !strings.HasPrefix(p.Encrypted, w.encPrefix) || !strings.HasSuffix(p.Encrypted, w.encSuffix) {
				t.Errorf("encrypted: %d bytes %q...%q, want %d %q...%q", len(p.Encrypted), respClip(p.Encrypted, 24), respTail(p.Encrypted, 12), w.encLen, w.encPrefix, w.encSuffix)
			}
		case runlet.ToolCallPart:
			if w.kind != "call" {
				t.Errorf("part %d is a tool call, want %s", i, w.kind)
				continue
			}
			if p.ID != w.callID || p.Name != w.name || string(p.Arguments) != w.args || p.ItemID != w.itemID || p.Provider != "openai" {
				t.Errorf("call = %+v (args %s), want id %q name %q args %s item %q", p, p.Arguments, w.callID, w.name, w.args, w.itemID)
			}
		default:
			t.Errorf("part %d: unexpected %T", i, p)
		}
	}
}

func respKinds(parts []runlet.Part) []string {
	var out []string
	for _, p := range parts {
		out = append(out, partType(p))
	}
	return out
}

// partType is the part's JSON "type", as a Message writes it.
func partType(p runlet.Part) string {
	b, _ := json.Marshal(runlet.Message{Parts: []runlet.Part{p}})
	var m struct {
		Parts []struct {
			Type string `json:"type"`
		} `json:"parts"`
	}
	_ = json.Unmarshal(b, &m)
	return m.Parts[0].Type
}

// Expected values, read from the fixtures.
var (
	respWantStreamFunctionCall = respWantResponse{
		id: "resp_67e554a155508191900ee113293c4c830794405d35281ae2", model: "gpt-4o-2024-08-06", finish: runlet.FinishToolCalls,
		usage: runlet.Usage{InputTokens: 255, OutputTokens: 16, TotalTokens: 271},
		parts: []respWantPart{{kind: "call", callID: "call_kL0PCQV7M2WMoVX8V8OtYSAL", name: "get_capital", args: `{"country":"France"}`, itemID: "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2"}},
	}
	respWantStreamText = respWantResponse{
		id: "resp_67e554a21aa88191b65876ac5e5bbe0406c52f0e511c76ed", model: "gpt-4o-2024-08-06", finish: runlet.FinishStop,
		usage: runlet.Usage{InputTokens: 278, OutputTokens: 9, TotalTokens: 287},
		parts: []respWantPart{{kind: "text", text: "The capital of France is Paris."}},
	}
	respWantStreamReasoningSummary = respWantResponse{
		id: "resp_68c42d0fb418819dbfa579f69406b49508fbf9b1584184ff", model: "o3-mini-2025-01-31", finish: runlet.FinishStop,
		usage: runlet.Usage{InputTokens: 13, OutputTokens: 1680, TotalTokens: 1693, ReasoningTokens: 1408},
		parts: []respWantPart{
			// 4 summary parts (460, 517, 540, 505 runes) joined by blank lines.
			{kind: "reasoning", runes: 2028, prefix: "**Providing street crossing instructions**\n\nThe user is aski", suffix: "It will be clear and easy to understand!",
				id: "rs_68c42d1d0878819d8266007cd3d1402c08fbf9b1584184ff", encLen: 440, encPrefix: "gAAAAABoxC0m_QWpOlSt8wyP", encSuffix: "tWmQ30zeXDs="},
			{kind: "text", runes: 1251, prefix: "I'm not a road safety professional, but here are", suffix: "specific to your area. Stay safe!"},
		},
	}
	respWantStreamGPT5 = respWantResponse{
		id: "resp_0050471a34b36ae60068c97b94a480819587a9d70cf2979b33", model: "gpt-5-2025-08-07", finish: runlet.FinishToolCalls,
		usage: runlet.Usage{InputTokens: 53, OutputTokens: 469, TotalTokens: 522, ReasoningTokens: 448},
		parts: []respWantPart{
			{kind: "reasoning", id: "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405", encLen: 3896, encPrefix: "gAAAAABoyXvxI6jwG5j6rvTG", encSuffix: "o02bg-rk3VE="},
			{kind: "call", callID: "call_CWXgs68YprAjp6t0371hiPOI", name: "final_result", args: `{"result":6666}`, itemID: "fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042"},
		},
	}
	respWantStreamPhase = respWantResponse{
		id: "resp_0fabc13af1ee0049006a691dfdab8881a1a75f2db7ff78cb83", model: "gpt-5.5-2026-04-23", finish: runlet.FinishToolCalls,
		usage: runlet.Usage{InputTokens: 63, OutputTokens: 69, TotalTokens: 132, ReasoningTokens: 26},
		parts: []respWantPart{
			{kind: "reasoning", id: "rs_0fabc13af1ee0049006a691dfe60b081a1baa444d3cf19afba", encLen: 1080, encPrefix: "gAAAAABqaR3-pGgSyJcPT3y2", encSuffix: "ls_UcqGK8PU="},
			{kind: "text", text: "I’ll check the capital lookup tool for “PotatoLand.”"},
			{kind: "call", callID: "call_LabG58Uhrq9kZvR52BYKjToD", name: "get_capital", args: `{"country":"PotatoLand"}`, itemID: "fc_0fabc13af1ee0049006a691dff0c1481a1b4a0eec7e3c753bb"},
		},
	}
	// OpenRouter's final response renames the reasoning item; the adapter
	// keeps the streamed item (its output_item.done).
	respWantStreamOpenRouter = respWantResponse{
		id: "gen-1764265411-Fu1iEX7h5MRWiL79lb94", model: "openai/gpt-oss-20b", finish: runlet.FinishStop,
		usage: runlet.Usage{InputTokens: 78, OutputTokens: 37, TotalTokens: 115, ReasoningTokens: 22},
		parts: []respWantPart{
			{kind: "reasoning", text: `The user asks: "What is 2+2?" They expect a straightforward answer: 4. Just answer 4.`, id: "rs_tmp_2kbe7x16sax"},
			{kind: "text", text: "4"},
		},
	}
	respWantMultistep = []respWantResponse{
		{
			id: "resp_01830d662ab3856501693c321345c88190b0de00f3b9975691", model: "gpt-5.1-codex-max", finish: runlet.FinishToolCalls,
			usage: runlet.Usage{InputTokens: 134, OutputTokens: 28, TotalTokens: 162},
			parts: []respWantPart{
				{kind: "reasoning", runes: 163, prefix: "**Calculating step-by-step using calculator**\n\nI'll compute ", suffix: "that by 10, reporting the final product.",
					id: "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9", encLen: 1060, encPrefix: "gAAAAABpPDIVOKrsHNZ0Gwso", encSuffix: "Nxat0wz4uQ=="},
				{kind: "call", callID: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", name: "calculator", args: `{"a":12,"b":7,"op":"add"}`, itemID: "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f"},
			},
		},
		{
			id: "resp_01830d662ab3856501693c3215903881909b710d150ff65014", model: "gpt-5.1-codex-max", finish: runlet.FinishToolCalls,
			usage: runlet.Usage{InputTokens: 221, OutputTokens: 26, TotalTokens: 247},
			parts: []respWantPart{{kind: "call", callID: "call_Q6pW65MUgW9vF59BmItYGos3", name: "calculator", args: `{"a":19,"b":3,"op":"multiply"}`, itemID: "fc_01830d662ab3856501693c32165be4819098c08f205f8932ef"}},
		},
		{
			id: "resp_01830d662ab3856501693c3216bef88190bf0e034cff24137b", model: "gpt-5.1-codex-max", finish: runlet.FinishToolCalls,
			usage: runlet.Usage{InputTokens: 260, OutputTokens: 26, TotalTokens: 286},
			parts: []respWantPart{{kind: "call", callID: "call_Zl5vIMnD7dVAjgU6FkhmiCZh", name: "calculator", args: `{"a":57,"b":10,"op":"multiply"}`, itemID: "fc_01830d662ab3856501693c32173d5081908f2121e1c3ff2901"}},
		},
		{
			id: "resp_01830d662ab3856501693c3217ba4c8190a3ddf6c839d4f12a", model: "gpt-5.1-codex-max", finish: runlet.FinishStop,
			usage: runlet.Usage{InputTokens: 299, OutputTokens: 12, TotalTokens: 311},
			parts: []respWantPart{{kind: "text", text: "The final result is **570**."}},
		},
	}
)

// respCheckDeltas checks that the deltas add up to the final response: text
// and reasoning deltas concatenate to the parts' texts, each tool call is
// announced once with its ID and name and its argument fragments add up to
// the final arguments, and modelkit.Accumulator assembles the same parts.
func respCheckDeltas(t *testing.T, c *respCollected) {
	t.Helper()
	var text, reasoning strings.Builder
	var calls []runlet.ToolCallPart
	for i, p := range c.done.Message.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			text.WriteString(p.Text)
		case runlet.ReasoningPart:
			if i > 0 && reasoning.Len() > 0 {
				t.Fatalf("test assumes one reasoning part")
			}
			reasoning.WriteString(p.Text)
		case runlet.ToolCallPart:
			calls = append(calls, p)
		}
	}
	if c.text != text.String() {
		t.Errorf("text deltas = %q, final text %q", c.text, text.String())
	}
	if c.reasoning != reasoning.String() {
		t.Errorf("reasoning deltas = %q, final reasoning %q", respClip(c.reasoning, 60), respClip(reasoning.String(), 60))
	}
	if len(c.callOrder) != len(calls) {
		t.Fatalf("tool-call delta indexes %v, want %d calls", c.callOrder, len(calls))
	}
	for i, idx := range c.callOrder {
		got, want := c.calls[idx], calls[i]
		if idx != i {
			t.Errorf("call %d has delta index %d", i, idx)
		}
		if got.id != want.ID || got.name != want.Name || got.args != string(want.Arguments) || got.announced != 1 {
			t.Errorf("call %d deltas: id %q name %q args %q announced %d; final %+v", i, got.id, got.name, got.args, got.announced, want)
		}
	}
	accMsg := c.acc.Message()
	if accMsg.Text() != c.done.Message.Text() || len(accMsg.ToolCalls()) != len(calls) {
		t.Errorf("accumulator disagrees: text %q calls %d", accMsg.Text(), len(accMsg.ToolCalls()))
	}
}

func TestResponsesFixtureStreams(t *testing.T) {
	tests := []struct {
		file       string
		want       respWantResponse
		textEvents int // text deltas on the wire
		argEvents  int // argument deltas on the wire (plus one announcement per call)
	}{
		{"pydantic-stream-function-call.response.sse", respWantStreamFunctionCall, 0, 5},
		{"pydantic-stream-text.response.sse", respWantStreamText, 7, 0},
		{"pydantic-stream-reasoning-summary.response.sse", respWantStreamReasoningSummary, 271, 0},
		{"pydantic-stream-usage-function-call-gpt5.response.sse", respWantStreamGPT5, 0, 6},
		{"pydantic-stream-phase-function-call-and-text.response.sse", respWantStreamPhase, 13, 7},
		{"pydantic-openrouter-stream-reasoning-text.response.sse", respWantStreamOpenRouter, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv, _ := respServe(t, 200, "text/event-stream", respFixture(t, tt.file))
			c, err := respDrain(t, respModel(srv.URL).Stream(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}))
			if err != nil {
				t.Fatal(err)
			}
			respCheckResponse(t, c.done, tt.want)
			respCheckDeltas(t, c)
			if c.textEvents != tt.textEvents {
				t.Errorf("text delta events = %d, want %d", c.textEvents, tt.textEvents)
			}
			args := 0
			for _, call := range c.calls {
				args += call.events - 1
			}
			if args != tt.argEvents {
				t.Errorf("argument delta events = %d, want %d", args, tt.argEvents)
			}
		})
	}
}

// The reasoning-summary fixture streams 4 summary parts in 383 deltas; the
// adapter forwards each delta once and separates parts with a blank line.
func TestResponsesFixtureReasoningSummaryDeltas(t *testing.T) {
	srv, _ := respServe(t, 200, "text/event-stream", respFixture(t, "pydantic-stream-reasoning-summary.response.sse"))
	c, err := respDrain(t, respModel(srv.URL).Stream(context.Background(), &runlet.ModelRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	if c.reasoningEvents != 383 {
		t.Errorf("reasoning delta events = %d, want 383", c.reasoningEvents)
	}
	if n := strings.Count(c.reasoning, "\n\n**"); n != 3 {
		t.Errorf("summary part separators = %d, want 3", n)
	}
}

// The vercel multi-step file is four streamed responses of one tool loop,
// recorded back to back; each is served as its own stream.
func TestResponsesFixtureMultistep(t *testing.T) {
	data := respFixture(t, "vercel-stream-reasoning-summary-encrypted-multistep-function-calls.chunks.jsonl")
	var streams [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.Contains(line[:min(len(line), 60)], []byte(`"response.created"`)) {
			streams = append(streams, nil)
		}
		streams[len(streams)-1] = append(append(streams[len(streams)-1], line...), '\n')
	}
	if len(streams) != len(respWantMultistep) {
		t.Fatalf("%d streams, want %d", len(streams), len(respWantMultistep))
	}
	for i, s := range streams {
		srv, _ := respServe(t, 200, "text/event-stream", respJSONLToSSE(s))
		c, err := respDrain(t, respModel(srv.URL).Stream(context.Background(), &runlet.ModelRequest{}))
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		respCheckResponse(t, c.done, respWantMultistep[i])
		respCheckDeltas(t, c)
	}

	// Served whole, the stream ends at the first terminal event.
	srv, _ := respServe(t, 200, "text/event-stream", respJSONLToSSE(data))
	c, err := respDrain(t, respModel(srv.URL).Stream(context.Background(), &runlet.ModelRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	respCheckResponse(t, c.done, respWantMultistep[0])
}

func TestResponsesFixtureStreamError(t *testing.T) {
	srv, _ := respServe(t, 200, "text/event-stream", respJSONLToSSE(respFixture(t, "vercel-stream-error-then-response-failed.chunks.jsonl")))
	_, err := respDrain(t, respModel(srv.URL).Stream(context.Background(), &runlet.ModelRequest{}))
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *ProviderError", err)
	}
	if pe.Provider != "openai" || pe.Code != "insufficient_quota" || pe.Type != "insufficient_quota" || pe.Retryable || pe.StatusCode != 0 ||
		!strings.HasPrefix(pe.Message, "You exceeded your current quota, please check your plan and billing details.") {
		t.Errorf("error = %#v", pe)
	}
	if errors.Is(err, runlet.ErrStreamIncomplete) {
		t.Error("an error event is not an incomplete stream")
	}
}

func TestResponsesFixtureNonStream(t *testing.T) {
	tests := []struct {
		file string
		want respWantResponse
	}{
		{"pydantic-nonstream-text.response.json", respWantResponse{
			id: "resp_68c2e8c147ac819491bcd667055eadbc02e845978fbbb592", model: "gpt-4o-2024-08-06", finish: runlet.FinishStop,
			usage: runlet.Usage{InputTokens: 14, OutputTokens: 8, TotalTokens: 22},
			parts: []respWantPart{{kind: "text", text: "The capital of France is Paris."}},
		}},
		{"pydantic-nonstream-function-call.response.json", respWantResponse{
			id: "resp_04907f5d3de791830068fbaa19bb908195a91378279dba0f14", model: "gpt-4o-2024-08-06", finish: runlet.FinishToolCalls,
			usage: runlet.Usage{InputTokens: 40, OutputTokens: 18, TotalTokens: 58},
			parts: []respWantPart{{kind: "call", callID: "call_YfwRsW8sUxDKipwyhWTzOXCA", name: "get_capital", args: `{"country":"PotatoLand"}`, itemID: "fc_04907f5d3de791830068fbaa1b310c81958dc9c508e878c632"}},
		}},
		{"pydantic-nonstream-reasoning-and-function-call.response.json", respWantResponse{
			id: "resp_68c42d28772c819684459966ee2201ed0e8bc41441c948f6", model: "gpt-5-2025-08-07", finish: runlet.FinishToolCalls,
			usage: runlet.Usage{InputTokens: 124, OutputTokens: 1926, TotalTokens: 2050, ReasoningTokens: 1792},
			parts: []respWantPart{
				// 5 summary parts joined by blank lines.
				{kind: "reasoning", runes: 2919, prefix: "**Creating a structured poem**\n\nI need to craft a 12-line poem where t", suffix: "lines. I should use the update_plan tool for that!",
					id: "rs_68c42d29124881968e24c1ca8c1fc7860e8bc41441c948f6", encLen: 9572, encPrefix: "gAAAAABoxC0_aDtrISw_", encSuffix: "q865810g=="},
				{kind: "call", callID: "call_gL7JE6GDeGGsFubqO2XGytyO", name: "update_plan", itemID: "fc_68c42d3e9e4881968b15fbb8253f58540e8bc41441c948f6",
					args: `{"plan":"Plan:\n1) Determine required first-letter acrostics for lines: odd lines -> SAMIRA; even lines -> DAWOOD (12 total lines).\n2) For each line, select a world capital whose name begins with the required first letter.\n3) Compose each line so that the first letter of every word spells that chosen capital (word-initial acrostic), while keeping imagery poetic and coherent.\n4) Double-check all acrostics (line-initial and word-initial) for accuracy.\n5) Deliver the 12-line poem."}`},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv, _ := respServe(t, 200, "application/json", respFixture(t, tt.file))
			got, err := respModel(srv.URL).Generate(context.Background(), &runlet.ModelRequest{})
			if err != nil {
				t.Fatal(err)
			}
			respCheckResponse(t, got, tt.want)

			// A server that answers a streaming request with a JSON body
			// gives the same response through Stream.
			c, err := respDrain(t, respModel(srv.URL).Stream(context.Background(), &runlet.ModelRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			respCheckResponse(t, c.done, tt.want)
		})
	}
}

func TestResponsesFixtureErrorBodies(t *testing.T) {
	tests := []struct {
		file              string
		status            int
		code, typ, prefix string
		retryable         bool
	}{
		{"pydantic-error-400-invalid-history.response.json", 400, "", "invalid_request_error",
			"Item 'rs_68c42de022c881948db7ed1cc2529f2e0202c9ad459e0d23' of type 'reasoning' was provided without its required following item.", false},
		{"pydantic-error-400-stream-request.response.json", 400, "decimal_below_min_value", "invalid_request_error",
			"Invalid 'temperature': decimal below minimum value.", false},
		// OpenAI sends insufficient_quota with HTTP 429 (see PROVENANCE.md).
		{"vercel-error-insufficient-quota.response.json", 429, "insufficient_quota", "insufficient_quota",
			"You exceeded your current quota", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv, _ := respServe(t, tt.status, "application/json", respFixture(t, tt.file))
			m := respModel(srv.URL)
			_, genErr := m.Generate(context.Background(), &runlet.ModelRequest{})
			_, streamErr := respDrain(t, m.Stream(context.Background(), &runlet.ModelRequest{}))
			for _, err := range []error{genErr, streamErr} {
				var pe *runlet.ProviderError
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want *ProviderError", err)
				}
				// 429 is retryable, except for insufficient_quota: waiting
				// does not add credit.
				if pe.StatusCode != tt.status || pe.Code != tt.code || pe.Type != tt.typ || !strings.HasPrefix(pe.Message, tt.prefix) || pe.Retryable != tt.retryable {
					t.Errorf("error = %#v", pe)
				}
			}
		})
	}
}

// The request bodies recorded with the fixtures are valid CreateResponse
// bodies, and the adapter builds equivalent ones for the same conversations.
func TestResponsesFixtureRequests(t *testing.T) {
	capital := respToolSpec(t, "get_capital", "", `{"additionalProperties":false,"properties":{"country":{"type":"string"}},"required":["country"],"type":"object"}`)
	tests := []struct {
		file string
		req  *runlet.ModelRequest
	}{
		{"pydantic-nonstream-text.request.json", &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("What is the capital of France?")}, Options: map[string]any{"model": "gpt-4o"}}},
		{"pydantic-nonstream-function-call.request.json", &runlet.ModelRequest{
			Messages: []runlet.Message{runlet.UserText("What is the capital of PotatoLand?")},
			Tools:    []runlet.ToolSpec{capital}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto},
			Options: map[string]any{"model": "gpt-4o", "strict": true},
		}},
		{"pydantic-stream-function-call.request.json", &runlet.ModelRequest{
			Messages: []runlet.Message{runlet.UserText("What is the capital of France?")},
			Tools:    []runlet.ToolSpec{capital}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto},
			Options: map[string]any{"model": "gpt-4o", "strict": true},
		}},
		{"pydantic-stream-text.request.json", &runlet.ModelRequest{
			Messages: []runlet.Message{
				runlet.UserText("What is the capital of France?"),
				{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2", Name: "get_capital", Arguments: json.RawMessage(`{"country":"France"}`)}}},
				{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2", Name: "get_capital", Content: "Paris"}}},
			},
			Tools: []runlet.ToolSpec{capital}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto},
			Options: map[string]any{"model": "gpt-4o", "strict": true},
		}},
		{"pydantic-stream-reasoning-summary.request.json", &runlet.ModelRequest{
			Messages: []runlet.Message{runlet.UserText("How do I cross the street?")},
			Options:  map[string]any{"model": "o3-mini", "reasoning": map[string]any{"effort": "high", "summary": "detailed"}},
		}},
		{"pydantic-stream-usage-function-call-gpt5.request.json", &runlet.ModelRequest{
			Messages:   []runlet.Message{runlet.UserText("Calculate 100 * 200 / 3")},
			Tools:      []runlet.ToolSpec{respToolSpec(t, "final_result", "The final response which ends this conversation", `{"additionalProperties":false,"properties":{"result":{"type":"integer"}},"required":["result"],"type":"object"}`)},
			ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceRequired},
			Options:    map[string]any{"model": "gpt-5", "strict": true, "service_tier": "flex", "reasoning": map[string]any{"effort": "low", "summary": nil}},
		}},
		{"pydantic-stream-phase-function-call-and-text.request.json", &runlet.ModelRequest{
			Instructions: "Briefly narrate what you are about to do before calling each tool.",
			Messages:     []runlet.Message{runlet.UserText("What is the capital of PotatoLand?")},
			Tools:        []runlet.ToolSpec{capital}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto},
			Options: map[string]any{"model": "gpt-5.5", "strict": true, "include": []any{"reasoning.encrypted_content"}},
		}},
		{"pydantic-openrouter-stream-reasoning-text.request.json", &runlet.ModelRequest{
			Messages: []runlet.Message{runlet.UserText("What is 2+2?")},
			Options:  map[string]any{"model": "openai/gpt-oss-20b"},
		}},
		{"pydantic-nonstream-reasoning-and-function-call.request.json", &runlet.ModelRequest{
			Instructions: "You are a helpful assistant that uses planning. You MUST use the update_plan tool and continually update it as you make progress against the user's prompt",
			Messages:     []runlet.Message{runlet.UserText(`Compose a 12-line poem where the first letters of the odd-numbered lines form the name "SAMIRA" and the first letters of the even-numbered lines spell out "DAWOOD." Additionally, the first letter of each word in every line should create the capital of a country`)},
			Tools:        []runlet.ToolSpec{respToolSpec(t, "update_plan", "", `{"additionalProperties":false,"properties":{"plan":{"type":"string"}},"required":["plan"],"type":"object"}`)},
			ToolChoice:   runlet.ToolChoice{Mode: runlet.ToolChoiceAuto},
			Options:      map[string]any{"model": "gpt-5", "strict": true, "reasoning": map[string]any{"effort": "low", "summary": "detailed"}},
		}},
		{"pydantic-error-400-invalid-history.request.json", nil},
		{"pydantic-error-400-stream-request.request.json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			recorded := respFixture(t, tt.file)
			if tt.req == nil {
				// Bodies the API rejected. A reasoning item without its
				// following item has the documented shape (the rule is not
				// in the schema); a negative temperature does not, and the
				// validator says so.
				err := openapitest.Check("CreateResponse", recorded)
				if neg := strings.Contains(tt.file, "stream-request"); neg != (err != nil) || (neg && !strings.Contains(err.Error(), "temperature")) {
					t.Errorf("validation: %v", err)
				}
				return
			}
			var rec map[string]any
			if err := json.Unmarshal(recorded, &rec); err != nil {
				t.Fatal(err)
			}
			stream, _ := rec["stream"].(bool)
			b, err := respModel("http://unused").buildRequest(tt.req, stream)
			if err != nil {
				t.Fatal(err)
			}
			respValidate(t, b.body)
			var got map[string]any
			json.Unmarshal(b.body, &got)
			respNormalize(rec)
			respNormalize(got)
			for _, k := range []string{"model", "input", "tools", "tool_choice", "reasoning", "include", "service_tier", "stream"} {
				if !respEqualJSON(got[k], rec[k]) {
					t.Errorf("%s:\n got  %s\n want %s", k, respJSON(got[k]), respJSON(rec[k]))
				}
			}
			if ins, _ := rec["instructions"].(string); ins != "" && got["instructions"] != ins {
				t.Errorf("instructions = %v", got["instructions"])
			}
			// The adapter is stateless by default; pydantic-ai left store unset.
			if got["store"] != false {
				t.Errorf("store = %v, want false", got["store"])
			}
		})
	}
}

// respNormalize removes differences that do not change meaning: the
// optional "type": "message" of input messages, null or empty tool
// descriptions.
func respNormalize(body map[string]any) {
	if in, ok := body["input"].([]any); ok {
		for _, it := range in {
			if m, ok := it.(map[string]any); ok && m["type"] == "message" {
				delete(m, "type")
			}
		}
	}
	if tools, ok := body["tools"].([]any); ok {
		for _, tl := range tools {
			if m, ok := tl.(map[string]any); ok && (m["description"] == nil || m["description"] == "") {
				delete(m, "description")
			}
		}
	}
	if r, ok := body["reasoning"].(map[string]any); ok {
		for k, v := range r {
			if v == nil {
				delete(r, k)
			}
		}
	}
	if body["previous_response_id"] == nil {
		delete(body, "previous_response_id")
	}
	if body["stream"] == false {
		delete(body, "stream")
	}
}

func respEqualJSON(a, b any) bool { return respJSON(a) == respJSON(b) }

func respJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestResponsesFixturesAllUsed(t *testing.T) {
	// Meaningful only when every test of the package ran before this one.
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		t.Skip("a -run filter is set")
	}
	entries, err := os.ReadDir(respFixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var unused []string
	for _, e := range entries {
		if !respFixturesUsed[e.Name()] {
			unused = append(unused, e.Name())
		}
	}
	slices.Sort(unused)
	if len(unused) > 0 {
		t.Errorf("fixtures not used by any test: %v", unused)
	}
}
