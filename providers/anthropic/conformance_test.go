package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
	"github.com/runlet/runlet/modelkit/modeltest"
	"github.com/runlet/runlet/runlettest"
)

// Conformance tests against recorded traffic in testdata/fixtures (copied
// from the shared fixtures; see testdata/fixtures/PROVENANCE.md). Expected
// values were read off the fixtures; long opaque values (signatures,
// redacted data, long texts) are taken from the fixture with a small
// reference parser, plus hard-coded prefixes and lengths.

const fixtureDir = "testdata/fixtures"

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureEvents returns a stream fixture's event payloads, in order. SSE
// fixtures have one data line per event; .chunks.jsonl one payload a line.
func fixtureEvents(t *testing.T, name string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(readFixture(t, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(name, ".sse") {
			var ok bool
			if line, ok = strings.CutPrefix(line, "data: "); !ok {
				continue
			}
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, ev)
	}
	return out
}

// refBlock is a content block as the reference parser assembles it.
type refBlock struct {
	typ, text, json, signature, data, id, name string
}

// refBlocks assembles a stream fixture's content blocks by index.
func refBlocks(t *testing.T, name string) []refBlock {
	var blocks []refBlock
	for _, ev := range fixtureEvents(t, name) {
		switch ev["type"] {
		case "content_block_start":
			cb := ev["content_block"].(map[string]any)
			b := refBlock{typ: cb["type"].(string)}
			b.data, _ = cb["data"].(string)
			b.id, _ = cb["id"].(string)
			b.name, _ = cb["name"].(string)
			blocks = append(blocks, b)
		case "content_block_delta":
			b := &blocks[int(ev["index"].(float64))]
			d := ev["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				b.text += d["text"].(string)
			case "thinking_delta":
				b.text += d["thinking"].(string)
			case "signature_delta":
				b.signature += d["signature"].(string)
			case "input_json_delta":
				b.json += d["partial_json"].(string)
			}
		}
	}
	return blocks
}

// sseFromJSONL frames .chunks.jsonl payloads as SSE, the event name taken
// from each payload's "type".
func sseFromJSONL(t *testing.T, data []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var head struct{ Type string }
		if err := json.Unmarshal(line, &head); err != nil {
			t.Fatal(err)
		}
		out.WriteString("event: " + head.Type + "\ndata: ")
		out.Write(line)
		out.WriteString("\n\n")
	}
	return out.Bytes()
}

// expect describes the response a fixture must produce.
type expect struct {
	id, model string
	finish    runlet.FinishReason
	usage     runlet.Usage
	// parts, compared exactly (nil: not compared)
	parts []runlet.Part
	check func(t *testing.T, resp *runlet.ModelResponse)
}

func (e expect) verify(t *testing.T, resp *runlet.ModelResponse) {
	t.Helper()
	if resp.ID != e.id || resp.Model != e.model || resp.FinishReason != e.finish {
		t.Errorf("id, model, finish = %q, %q, %q; want %q, %q, %q", resp.ID, resp.Model, resp.FinishReason, e.id, e.model, e.finish)
	}
	if resp.Usage != e.usage {
		t.Errorf("usage = %+v, want %+v", resp.Usage, e.usage)
	}
	if resp.Message.Role != runlet.RoleAssistant {
		t.Errorf("role = %q", resp.Message.Role)
	}
	if e.parts != nil && !reflect.DeepEqual(resp.Message.Parts, e.parts) {
		t.Errorf("parts =\n  %#v\nwant\n  %#v", resp.Message.Parts, e.parts)
	}
	if e.check != nil {
		e.check(t, resp)
	}
	// Whatever came back must survive a JSON round trip (the runtime stores
	// it), except deliberately kept broken arguments. (Marshalling compacts
	// tool arguments, so compare the encodings.)
	if e.finish != runlet.FinishLength {
		data, err := json.Marshal(resp.Message)
		if err != nil {
			t.Fatalf("marshal message: %v", err)
		}
		var back runlet.Message
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("unmarshal message: %v", err)
		}
		if again, _ := json.Marshal(back); string(again) != string(data) {
			t.Errorf("message does not round-trip:\n%s\n%s", data, again)
		}
	}
}

func usage(in, out int) runlet.Usage {
	return runlet.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out, Requests: 1}
}

// searches sets the web searches of u.
func searches(u runlet.Usage, n int) runlet.Usage {
	u.WebSearchRequests = n
	return u
}

func args(s string) json.RawMessage { return json.RawMessage(s) }

func nonStreamingCases() map[string]expect {
	return map[string]expect{
		"pydantic-nonstream-text.response.json": {
			id: "msg_01Fg1JVgvCYUHWsxrj9GkpEv", model: "claude-3-opus-20240229", finish: runlet.FinishStop, usage: usage(20, 10),
			parts: []runlet.Part{runlet.TextPart{Text: "The capital of France is Paris."}},
		},
		"vercel-nonstream-text-original-key-order.response.json": {
			id: "msg_01VdEjxAP5ahtHKrrRdNBteQ", model: "claude-sonnet-4-5-20250929", finish: runlet.FinishStop, usage: usage(12, 29),
			parts: []runlet.Part{runlet.TextPart{Text: "Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?"}},
		},
		"pydantic-nonstream-parallel-tool-use.response.json": {
			id: "msg_011S3wxtqL5CVescWqS3zeg2", model: "claude-haiku-4-5-20251001", finish: runlet.FinishToolCalls, usage: usage(423, 202),
			parts: []runlet.Part{
				runlet.TextPart{Text: "I'll help you find out who is the youngest by retrieving information about each family member. I'll retrieve their entity information to compare their ages."},
				runlet.ToolCallPart{ID: "toolu_0167cfEnoQaPviGdVXA95zcu", Name: "retrieve_entity_info", Arguments: args(`{"name":"Alice"}`)},
				runlet.ToolCallPart{ID: "toolu_01EEe2V5HD1Ac4rKiUR4HD2T", Name: "retrieve_entity_info", Arguments: args(`{"name":"Bob"}`)},
				runlet.ToolCallPart{ID: "toolu_01XFyAjstT3966qvRynZyVPo", Name: "retrieve_entity_info", Arguments: args(`{"name":"Charlie"}`)},
				runlet.ToolCallPart{ID: "toolu_013mnQZbgtK2oe3Mo3XKJsx3", Name: "retrieve_entity_info", Arguments: args(`{"name":"Daisy"}`)},
			},
		},
		"pydantic-nonstream-thinking-text.response.json": {
			id: "msg_01TGA8SWcHTTn5674cmicbnJ", model: "claude-sonnet-4-5-20250929", finish: runlet.FinishStop, usage: usage(43, 321),
			check: func(t *testing.T, resp *runlet.ModelResponse) {
				ps := resp.Message.Parts
				if len(ps) != 2 {
					t.Fatalf("parts = %#v", ps)
				}
				r := ps[0].(runlet.ReasoningPart)
				want := fixtureBlock(t, "pydantic-nonstream-thinking-text.response.json", 0)
				if r.Text != "This is a straightforward question about pedestrian safety. I should provide clear, practical advice about crossing the street safely." ||
					r.Signature != want["signature"] || !strings.HasPrefix(r.Signature, "Eq8CCkYICxgCKkDd") || r.Provider != "anthropic" || r.Encrypted != "" {
					t.Errorf("reasoning = %#v", r)
				}
				text := ps[1].(runlet.TextPart).Text
				if text != fixtureBlock(t, "pydantic-nonstream-thinking-text.response.json", 1)["text"] ||
					!strings.HasPrefix(text, "Here's how to cross the street safely:") || !strings.HasSuffix(text, "stay alert and make safe choices.") {
					t.Errorf("text = %q", text)
				}
			},
		},
		"pydantic-nonstream-thinking-tool-use.response.json": {
			id: "msg_01WvueFjZVbHcj4H4zUzeGv2", model: "claude-sonnet-4-20250514", finish: runlet.FinishToolCalls, usage: usage(398, 155),
			check: func(t *testing.T, resp *runlet.ModelResponse) {
				ps := resp.Message.Parts
				if len(ps) != 3 {
					t.Fatalf("parts = %#v", ps)
				}
				r := ps[0].(runlet.ReasoningPart)
				want := fixtureBlock(t, "pydantic-nonstream-thinking-tool-use.response.json", 0)
				if r.Text != want["thinking"] || !strings.HasPrefix(r.Text, "The user is asking about the largest city") ||
					r.Signature != want["signature"] || !strings.HasPrefix(r.Signature, "EqEECkYICxgCKkAo3UA4") || r.Provider != "anthropic" {
					t.Errorf("reasoning = %#v", r)
				}
				if got := ps[1]; !reflect.DeepEqual(got, runlet.TextPart{Text: "I'll help you find the largest city in your country. First, let me determine which country you're from."}) {
					t.Errorf("text = %#v", got)
				}
				if got := ps[2].(runlet.ToolCallPart); got.ID != "toolu_01YGzqpRE16Vricda3Aqcejo" || got.Name != "get_user_country" || string(got.Arguments) != "{}" {
					t.Errorf("tool call = %#v", got)
				}
			},
		},
		"vercel-nonstream-output-tokens-details-thinking.response.json": {
			id: "msg_011CdMNhurHSJCxCC2NB7WYc", model: "claude-opus-5", finish: runlet.FinishStop,
			usage: runlet.Usage{InputTokens: 51, OutputTokens: 1699, TotalTokens: 1750, ReasoningTokens: 139, Requests: 1},
			check: func(t *testing.T, resp *runlet.ModelResponse) {
				ps := resp.Message.Parts
				if r, ok := ps[0].(runlet.ReasoningPart); len(ps) != 2 || !ok || r.Signature != fixtureBlock(t, "vercel-nonstream-output-tokens-details-thinking.response.json", 0)["signature"] {
					t.Errorf("parts = %#v", ps)
				}
			},
		},
		"pydantic-nonstream-redacted-thinking.response.json": {
			id: "msg_01TbZ1ZKNMPq28AgBLyLX3c4", model: "claude-sonnet-4-5-20250929", finish: runlet.FinishStop, usage: usage(92, 196),
			check: func(t *testing.T, resp *runlet.ModelResponse) {
				ps := resp.Message.Parts
				if len(ps) != 2 {
					t.Fatalf("parts = %#v", ps)
				}
				r := ps[0].(runlet.ReasoningPart)
				data := fixtureBlock(t, "pydantic-nonstream-redacted-thinking.response.json", 0)["data"]
				if r.Encrypted != data || !strings.HasPrefix(r.Encrypted, "EvgFCkYIBxgCKkBm") || len(r.Encrypted) != 1020 || r.Text != "" || r.Signature != "" || r.Provider != "anthropic" {
					t.Errorf("reasoning = %#v", r)
				}
				if text := ps[1].(runlet.TextPart).Text; !strings.HasPrefix(text, "I notice that your message appears to contain a command") {
					t.Errorf("text = %q", text)
				}
			},
		},
	}
}

func TestConformanceNonStreaming(t *testing.T) {
	for name, want := range nonStreamingCases() {
		t.Run(name, func(t *testing.T) {
			srv, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: readFixture(t, name)})
			resp, err := m.Generate(ctxTimeout(t), userRequest("x"))
			if err != nil {
				t.Fatal(err)
			}
			want.verify(t, resp)
			if got := srv.Requests()[0].JSON()["stream"]; got != nil {
				t.Errorf("stream = %v in a Generate request", got)
			}
		})
	}
}

// fixtureBlock returns content block i of a JSON response fixture.
func fixtureBlock(t *testing.T, name string, i int) map[string]any {
	var body struct{ Content []map[string]any }
	if err := json.Unmarshal(readFixture(t, name), &body); err != nil {
		t.Fatal(err)
	}
	return body.Content[i]
}

type errorCase struct {
	file, typ, message, requestID string
	status                        int
}

func errorCases() []errorCase {
	return []errorCase{
		{"pydantic-error-400-invalid-request.response.json", "invalid_request_error",
			"This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium.", "req_011Ca7jT9AHpgXgdv8igm4z9", 400},
		{"pydantic-error-404-not-found-count-tokens.response.json", "not_found_error",
			"model: claude-does-not-exist", "req_011CVEA3SF7rnb3DuBZytqQa", 404},
	}
}

func TestConformanceErrors(t *testing.T) {
	for _, tt := range errorCases() {
		t.Run(tt.file, func(t *testing.T) {
			srv, m := newServerModel(t, Config{})
			// The API sends the request ID as a header too.
			srv.InjectFault(runlettest.Fault{Status: tt.status, Body: string(readFixture(t, tt.file)),
				Header: map[string][]string{"Request-Id": {tt.requestID}, "Content-Type": {"application/json"}}})
			_, err := m.Generate(ctxTimeout(t), userRequest("x"))
			perr := requireProviderError(t, err)
			if perr.StatusCode != tt.status || perr.Type != tt.typ || perr.Message != tt.message || perr.RequestID != tt.requestID || perr.Retryable || perr.Provider != "anthropic" {
				t.Errorf("error = %#v", *perr)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("a %d was retried: %d requests", tt.status, len(srv.Requests()))
			}
		})
	}
}

func streamingCases() map[string]expect {
	return map[string]expect{
		"pydantic-stream-text.response.sse": {
			id: "msg_018E1hg8GoVTGEKQY3ovMcSJ", model: "claude-sonnet-4-5-20250929", finish: runlet.FinishStop, usage: usage(20, 5),
			parts: []runlet.Part{runlet.TextPart{Text: "2"}},
		},
		"anthropicpy-stream-text-then-tool-use.response.sse": {
			id: "msg_019Q1hrJbZG26Fb9BQhrkHEr", model: "claude-sonnet-4-20250514", finish: runlet.FinishToolCalls, usage: usage(377, 65),
			parts: []runlet.Part{
				runlet.TextPart{Text: "I'll check the current weather in Paris for you."},
				runlet.ToolCallPart{ID: "toolu_01NRLabsLyVHZPKxbKvkfSMn", Name: "get_weather", Arguments: args(`{"location": "Paris"}`)},
			},
		},
		"anthropicpy-stream-tool-use-max-tokens-truncated.response.sse": {
			// The tool input was cut off by max_tokens: kept as received (not
			// valid JSON), with finish reason length so the caller can tell.
			id: "msg_01UdjYBBipA9omjYhicnevgq", model: "claude-3-7-sonnet-20250219", finish: runlet.FinishLength, usage: usage(450, 124),
			parts: []runlet.Part{
				runlet.TextPart{Text: "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file called taxes.txt. Let me do that for you now."},
				runlet.ToolCallPart{ID: "toolu_01EKqbqmZrGRXy18eN7m9kvY", Name: "make_file",
					Arguments: args("{\"filename\": \"taxes.txt\", \"lines_of_text\": [\n\"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s\",\n\"\",\n\"## INTRODUCTION\",\n\"\",\n\"Filing taxes")},
			},
		},
		"vercel-stream-tool-use-no-args.chunks.jsonl": {
			id: "msg_01GE2RKp1VYsPzdFs3sS9z5S", model: "claude-sonnet-4-5-20250929", finish: runlet.FinishToolCalls, usage: usage(565, 48),
			parts: []runlet.Part{
				runlet.TextPart{Text: "I'll update the issue list for you."},
				runlet.ToolCallPart{ID: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", Name: "updateIssueList", Arguments: args(`{}`)},
			},
		},
		"pydantic-stream-tool-use-tool-search.response.sse": {
			// server_tool_use and tool_search_tool_result make one
			// HostedToolPart (a tool without a common kind); the client tool
			// call is the response's first (Index 0). Input tokens come from
			// message_delta (cumulative), replacing message_start's 702.
			id: "msg_01E3Wn1NynZw9FALZ68znj9S", model: "claude-sonnet-4-6", finish: runlet.FinishToolCalls, usage: usage(1591, 175),
			check: func(t *testing.T, resp *runlet.ModelResponse) {
				ps := resp.Message.Parts
				if len(ps) != 4 {
					t.Fatalf("parts = %#v", ps)
				}
				want := []runlet.Part{
					runlet.TextPart{Text: "Let me search for a tool that can provide current exchange rate information."},
					nil,
					runlet.TextPart{Text: "I found the right tool! Let me fetch the current USD to EUR exchange rate for you."},
					runlet.ToolCallPart{ID: "toolu_01EFn5wTNBYA8Reni8rbmnHT", Name: "get_exchange_rate", Arguments: args(`{"from_currency": "USD", "to_currency": "EUR"}`)},
				}
				for i, w := range want {
					if w != nil && !reflect.DeepEqual(ps[i], w) {
						t.Errorf("part %d = %#v", i, ps[i])
					}
				}
				h := ps[1].(runlet.HostedToolPart)
				items := rawItems(t, h.Raw)
				if h.ID != "srvtoolu_01S5swZdBmTzLDVzwcT5LbHp" || h.Name != "tool_search_tool_bm25" || h.Kind != "" || h.Provider != "anthropic" ||
					string(h.Input) != `{"query":"USD EUR exchange rate currency conversion"}` || len(items) != 2 ||
					items[1] != startBlock(t, "pydantic-stream-tool-use-tool-search.response.sse", 2) {
					t.Errorf("hosted part = %+v (raw %s)", h, h.Raw)
				}
			},
		},
		"pydantic-stream-redacted-thinking.response.sse": {
			id: "msg_018XZkwvj9asBiffg3fXt88s", model: "claude-sonnet-4-5-20250929", finish: runlet.FinishStop, usage: usage(92, 189),
			check: func(t *testing.T, resp *runlet.ModelResponse) {
				ref := refBlocks(t, "pydantic-stream-redacted-thinking.response.sse")
				ps := resp.Message.Parts
				if len(ps) != 3 {
					t.Fatalf("parts = %#v", ps)
				}
				for i, prefix := range []string{"EqkECkYIBxgCKkA8", "EtgBCkYIBxgCKkDQ"} {
					if r := ps[i].(runlet.ReasoningPart); r.Encrypted != ref[i].data || !strings.HasPrefix(r.Encrypted, prefix) || r.Text != "" || r.Provider != "anthropic" {
						t.Errorf("part %d = %#v", i, r)
					}
				}
				if text := ps[2].(runlet.TextPart).Text; text != ref[2].text || !strings.HasPrefix(text, "I notice that you've sent what appears") ||
					!strings.HasSuffix(text, "How can I assist you today with a legitimate task or question?") {
					t.Errorf("text = %q", text)
				}
			},
		},
		"pydantic-stream-thinking-signature-text.response.sse": {
			id: "msg_01ALwQ87pTS7hH1PjSdC9wJD", model: "claude-sonnet-4-20250514", finish: runlet.FinishStop, usage: usage(43, 282),
			check: func(t *testing.T, resp *runlet.ModelResponse) {
				ref := refBlocks(t, "pydantic-stream-thinking-signature-text.response.sse")
				ps := resp.Message.Parts
				if len(ps) != 2 {
					t.Fatalf("parts = %#v", ps)
				}
				r := ps[0].(runlet.ReasoningPart)
				if r.Text != "This is a straightforward question about pedestrian safety. I should provide clear, helpful advice about how to safely cross a street. This is basic safety information that could help prevent accidents." ||
					r.Signature != ref[0].signature || !strings.HasPrefix(r.Signature, "EvMCCkYICxgCKkCHP2cS") || r.Provider != "anthropic" {
					t.Errorf("reasoning = %#v", r)
				}
				if text := ps[1].(runlet.TextPart).Text; text != ref[1].text || !strings.HasSuffix(text, "Always prioritize safety over speed when crossing streets.") {
					t.Errorf("text = %q", text)
				}
			},
		},
		"pydantic-stream-web-search-citations.response.sse": {
			// 17 blocks: thinking, 2 × (server_tool_use, web_search_tool_result),
			// 12 text blocks (some with citations_delta). The server blocks
			// are checked in TestStreamedWebSearch; here the rest.
			id: "msg_01QmxBSdEbD9ZeBWDVgFDoQ5", model: "claude-sonnet-4-20250514", finish: runlet.FinishStop, usage: searches(usage(22397, 637), 2),
			check: func(t *testing.T, resp *runlet.ModelResponse) {
				ref := refBlocks(t, "pydantic-stream-web-search-citations.response.sse")
				if len(ref) != 17 {
					t.Fatalf("reference parser found %d blocks", len(ref))
				}
				var want []runlet.Part
				for _, b := range ref {
					switch b.typ {
					case "thinking":
						want = append(want, runlet.ReasoningPart{Text: b.text, Signature: b.signature, Provider: "anthropic"})
					case "text":
						if b.text != "" {
							want = append(want, runlet.TextPart{Text: b.text})
						}
					}
				}
				if len(want) != 13 {
					t.Fatalf("reference parts = %d", len(want))
				}
				var got []runlet.Part
				for _, p := range resp.Message.Parts {
					switch p := p.(type) {
					case runlet.HostedToolPart:
						continue
					case runlet.TextPart:
						p.Citations = nil
						got = append(got, p)
					default:
						got = append(got, p)
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("parts =\n  %#v\nwant\n  %#v", resp.Message.Parts, want)
				}
				if len(resp.Message.ToolCalls()) != 0 {
					t.Error("server tool calls leaked as client tool calls")
				}
			},
		},
	}
}

func TestConformanceStreaming(t *testing.T) {
	for name, want := range streamingCases() {
		t.Run(name, func(t *testing.T) {
			body := readFixture(t, name)
			if strings.HasSuffix(name, ".jsonl") {
				body = sseFromJSONL(t, body)
			}
			srv, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: body})
			resp := modeltest.CheckStream(t, m.Stream(ctxTimeout(t), userRequest("x")))
			want.verify(t, resp)
			if got := srv.Requests()[0].JSON()["stream"]; got != true {
				t.Errorf("stream = %v", got)
			}
			// Generate over the same stream gives the same response.
			srv.Enqueue(runlettest.AnthropicResponse{Body: body})
			again, err := modelkit.Collect(m.Stream(ctxTimeout(t), userRequest("x")))
			if err != nil || !reflect.DeepEqual(again, resp) {
				t.Errorf("second run differs: %v", err)
			}
		})
	}
}

// TestConformanceRequests translates runlet requests equivalent to the
// recorded request bodies and compares. Server tools (web_search,
// tool_search with defer_loading) have no runlet equivalent, so those
// fixtures compare everything but tools; the count_tokens request has no
// Messages equivalent (no max_tokens) and is only checked for its messages.
type requestCase struct {
	file      string
	req       *runlet.ModelRequest
	stream    bool
	skipTools bool
	only      []string // compare only these keys
}

func requestCases(t *testing.T) []requestCase {
	user := func(s string) []runlet.Message { return []runlet.Message{runlet.UserText(s)} }
	return []requestCase{
		{file: "pydantic-nonstream-text.request.json", req: &runlet.ModelRequest{
			Instructions: "You are a helpful assistant.\n\n", Messages: user("What is the capital of France?"),
			Options: map[string]any{"model": "claude-3-opus-latest"}}},
		{file: "pydantic-error-400-invalid-request.request.json", req: &runlet.ModelRequest{
			Messages: user("What is 2+2?"),
			Options:  map[string]any{"model": "claude-opus-4-6", "output_config": map[string]any{"effort": "xhigh"}}}},
		{file: "pydantic-error-404-not-found-count-tokens.request.json", only: []string{"messages", "model"}, req: &runlet.ModelRequest{
			Messages: user("hello"), Options: map[string]any{"model": "claude-does-not-exist"}}},
		{file: "pydantic-nonstream-redacted-thinking.request.json", req: &runlet.ModelRequest{
			Messages: user("ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"),
			Options:  map[string]any{"model": "claude-sonnet-4-5-20250929", "thinking": 1024}}},
		{file: "pydantic-stream-redacted-thinking.request.json", stream: true, req: &runlet.ModelRequest{
			Messages: user("ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"),
			Options:  map[string]any{"model": "claude-sonnet-4-5-20250929", "thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}}},
		{file: "pydantic-nonstream-thinking-text.request.json", req: &runlet.ModelRequest{
			Messages: user("How do I cross the street?"), Options: map[string]any{"model": "claude-sonnet-4-5", "thinking": 1024}}},
		{file: "pydantic-stream-thinking-signature-text.request.json", stream: true, req: &runlet.ModelRequest{
			Messages: user("How do I cross the street?"), Options: map[string]any{"model": "claude-sonnet-4-0", "thinking": 1024}}},
		{file: "pydantic-stream-text.request.json", stream: true, req: &runlet.ModelRequest{
			Messages: user("What is 1+1? Answer with just the number."), Settings: runlet.Settings{MaxOutputTokens: 32000},
			Options: map[string]any{"model": "claude-sonnet-4-5"}}},
		{file: "pydantic-nonstream-parallel-tool-use.request.json", req: &runlet.ModelRequest{
			Instructions: "\n    Use the `retrieve_entity_info` tool to get information about a specific person.\n    If you need to use `retrieve_entity_info` to get information about multiple people, try\n    to call them in parallel as much as possible.\n    Think step by step and then provide a single most probable concise answer.\n    ",
			Messages:     user("Alice, Bob, Charlie and Daisy are a family. Who is the youngest?"),
			Tools:        fixtureTools(t, "pydantic-nonstream-parallel-tool-use.request.json"),
			ToolChoice:   runlet.ToolChoice{Mode: runlet.ToolChoiceAuto},
			Options:      map[string]any{"model": "claude-haiku-4-5"}}},
		{file: "pydantic-nonstream-thinking-tool-use.request.json", req: &runlet.ModelRequest{
			Messages:   user("What is the largest city in the user country?"),
			Tools:      fixtureTools(t, "pydantic-nonstream-thinking-tool-use.request.json"),
			ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto},
			Options:    map[string]any{"model": "claude-sonnet-4-0", "thinking": 3000}}},
		{file: "pydantic-stream-tool-use-tool-search.request.json", stream: true, skipTools: true, req: &runlet.ModelRequest{
			Messages: user("What is the current USD to EUR exchange rate?"), Tools: []runlet.ToolSpec{{Name: "get_exchange_rate"}},
			ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}, Options: map[string]any{"model": "claude-sonnet-4-6"}}},
		{file: "pydantic-stream-web-search-citations.request.json", stream: true, skipTools: true, req: &runlet.ModelRequest{
			Messages: user("What is the weather in San Francisco today?"), Tools: []runlet.ToolSpec{{Name: "web_search"}},
			ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}, Options: map[string]any{"model": "claude-sonnet-4-0", "thinking": 3000}}},
	}
}

func TestConformanceRequests(t *testing.T) {
	for _, tt := range requestCases(t) {
		t.Run(tt.file, func(t *testing.T) {
			var want map[string]any
			if err := json.Unmarshal(readFixture(t, tt.file), &want); err != nil {
				t.Fatal(err)
			}
			if want["stream"] == false {
				delete(want, "stream") // the adapter omits the default
			}
			for _, tool := range asSlice(want["tools"]) {
				if m, ok := tool.(map[string]any); ok && m["description"] == "" {
					delete(m, "description") // omitted when empty
				}
			}
			gotBody, _ := build(t, Config{Model: "unused"}, tt.req, tt.stream)
			var got map[string]any
			raw, _ := json.Marshal(gotBody)
			_ = json.Unmarshal(raw, &got)
			if tt.skipTools {
				delete(want, "tools")
				delete(got, "tools")
			}
			if tt.only != nil {
				for k := range want {
					if !slices.Contains(tt.only, k) {
						delete(want, k)
					}
				}
				for k := range got {
					if !slices.Contains(tt.only, k) {
						delete(got, k)
					}
				}
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("body =\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// fixtureTools reads a request fixture's tools as runlet tool specs.
func fixtureTools(t *testing.T, name string) []runlet.ToolSpec {
	var body struct {
		Tools []struct {
			Name        string             `json:"name"`
			Description string             `json:"description"`
			InputSchema *jsonschema.Schema `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(readFixture(t, name), &body); err != nil {
		t.Fatal(err)
	}
	var specs []runlet.ToolSpec
	for _, tl := range body.Tools {
		specs = append(specs, runlet.ToolSpec{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema})
	}
	return specs
}

// TestFixturesCovered checks that every file in testdata/fixtures is used by
// a conformance test, so a new fixture cannot be forgotten.
func TestFixturesCovered(t *testing.T) {
	covered := map[string]bool{}
	for f := range nonStreamingCases() {
		covered[f] = true
	}
	for f := range streamingCases() {
		covered[f] = true
	}
	for _, c := range errorCases() {
		covered[c.file] = true
	}
	for _, c := range requestCases(t) {
		covered[c.file] = true
	}
	for _, f := range hostedFixtures {
		covered[f] = true
	}
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Name() == "PROVENANCE.md" {
			continue
		}
		n++
		if !covered[e.Name()] {
			t.Errorf("fixture %s is not used by any conformance test", e.Name())
		}
		delete(covered, e.Name())
	}
	for f := range covered {
		t.Errorf("conformance test names missing fixture %s", f)
	}
	if want := 29 + len(hostedFixtures); n != want {
		t.Errorf("%d fixtures, want %d (the 28 shared anthropic-messages fixtures, one added for thinking tokens and the server tools')", n, want)
	}
}

// In a stream the thinking tokens come with message_delta's cumulative usage.
func TestStreamThinkingTokens(t *testing.T) {
	d := newDecoder("anthropic", 0)
	for _, ev := range []string{
		`{"type":"message_start","message":{"id":"m","model":"claude-opus-5","usage":{"input_tokens":10,"output_tokens":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":50,"output_tokens_details":{"thinking_tokens":20}}}`,
		`{"type":"message_stop"}`,
	} {
		if _, _, err := d.decode("", []byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if u := d.response().Usage; u.ReasoningTokens != 20 || u.OutputTokens != 50 || u.InputTokens != 10 {
		t.Errorf("usage %+v", u)
	}
}
