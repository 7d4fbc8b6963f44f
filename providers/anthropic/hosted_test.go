package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// hostedFixtures are the recordings of server tools (see PROVENANCE.md)
// the tests in this file use.
var hostedFixtures = []string{
	"pydantic-web-search-turn1.request.json", "pydantic-web-search-turn1.response.json",
	"pydantic-web-search-turn2.request.json", "pydantic-web-search-turn2.response.json",
	"pydantic-code-execution-turn1.request.json", "pydantic-code-execution-turn1.response.json",
	"pydantic-web-fetch-turn1.request.json", "pydantic-web-fetch-turn1.response.json",
}

// rawItems splits a HostedToolPart's Raw into its items, as compact strings.
func rawItems(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("raw %s: %v", raw, err)
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it)
	}
	return out
}

// startBlock returns the content_block of the content_block_start event
// for block index in a recorded stream, as its bytes on the wire.
func startBlock(t *testing.T, name string, index int) string {
	t.Helper()
	for line := range bytes.Lines(readFixture(t, name)) {
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: "))
		if !ok {
			continue
		}
		var ev struct {
			Type         string          `json:"type"`
			Index        int             `json:"index"`
			ContentBlock json.RawMessage `json:"content_block"`
		}
		if json.Unmarshal(data, &ev) == nil && ev.Type == "content_block_start" && ev.Index == index {
			return string(ev.ContentBlock)
		}
	}
	t.Fatalf("%s: no block %d", name, index)
	return ""
}

func hostedParts(msg runlet.Message) []runlet.HostedToolPart {
	var out []runlet.HostedToolPart
	for _, p := range msg.Parts {
		if h, ok := p.(runlet.HostedToolPart); ok {
			out = append(out, h)
		}
	}
	return out
}

// The recorded stream of two web searches: each call and its result are
// one part, the result block kept byte-exact (encrypted_content included),
// the search results are its Sources, every citations_delta is a
// Citation on its text part with its encrypted_index, and the searches
// are counted.
func TestStreamedWebSearch(t *testing.T) {
	const name = "pydantic-stream-web-search-citations.response.sse"
	_, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: readFixture(t, name)})
	_, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
	if err != nil {
		t.Fatal(err)
	}
	hosted := hostedParts(resp.Message)
	if len(hosted) != 2 {
		t.Fatalf("%d hosted parts", len(hosted))
	}
	ref := refBlocks(t, name)
	var calls []int // block indexes of the server_tool_use blocks
	for i, b := range ref {
		if b.typ == "server_tool_use" {
			calls = append(calls, i)
		}
	}
	for i, h := range hosted {
		call := calls[i]
		var input bytes.Buffer
		_ = json.Compact(&input, []byte(ref[call].json))
		items := rawItems(t, h.Raw)
		if h.Kind != runlet.HostedWebSearch || h.Name != "web_search" || h.ID != ref[call].id || h.Provider != "anthropic" ||
			string(h.Input) != input.String() || len(items) != 2 || items[1] != startBlock(t, name, call+1) || h.IsError {
			t.Errorf("search %d = %s %s %s %s, want call block %d (input %s)", i, h.ID, h.Name, h.Input, h.Raw[:min(len(h.Raw), 300)], call, ref[call].json)
		}
		var res struct {
			Content []struct{ URL, Title string } `json:"content"`
		}
		if err := json.Unmarshal([]byte(items[1]), &res); err != nil || len(res.Content) == 0 || len(h.Sources) != len(res.Content) {
			t.Fatalf("search %d: %d sources, result has %d (%v)", i, len(h.Sources), len(res.Content), err)
		}
		for j, s := range h.Sources {
			if s.URL != res.Content[j].URL || s.Title != res.Content[j].Title {
				t.Errorf("search %d source %d = %+v", i, j, s)
			}
		}
	}
	var want []string // the recorded citations, in order
	for _, ev := range fixtureEvents(t, name) {
		if d, ok := ev["delta"].(map[string]any); ok && d["type"] == "citations_delta" {
			want = append(want, d["citation"].(map[string]any)["encrypted_index"].(string))
		}
	}
	var got []string
	for _, p := range resp.Message.Parts {
		if tp, ok := p.(runlet.TextPart); ok {
			for _, c := range tp.Citations {
				var w struct {
					EncryptedIndex string `json:"encrypted_index"`
				}
				if json.Unmarshal(c.Raw, &w) != nil || c.URL == "" || c.Title == "" || c.CitedText == "" || c.Provider != "anthropic" {
					t.Errorf("citation %+v", c)
				}
				got = append(got, w.EncryptedIndex)
			}
		}
	}
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("citations' encrypted_index\n got %q\nwant %q", got, want)
	}
	if resp.Usage.WebSearchRequests != 2 {
		t.Errorf("usage %+v", resp.Usage)
	}
}

// Every server tool recorded in a non-streamed answer (web search with
// citations, bash code execution, web fetch) decodes to a HostedToolPart
// whose Raw items are the body's own bytes.
func TestServerToolResponses(t *testing.T) {
	for _, tt := range []struct {
		file     string
		kind     runlet.HostedToolKind
		name     string
		input    string
		sources  int
		output   string
		searches int
		cited    int // text parts with citations; -1: as many as the body's text blocks with citations
	}{
		{"pydantic-web-search-turn1.response.json", runlet.HostedWebSearch, "web_search", `{"query":"San Francisco weather today"}`, 10, "", 1, -1},
		{"pydantic-web-search-turn2.response.json", runlet.HostedWebSearch, "web_search", `{"query":"Mexico City weather today"}`, 10, "", 1, -1},
		{"pydantic-code-execution-turn1.response.json", runlet.HostedCodeExecution, "bash_code_execution", `{"command":"echo $((3 * 12390))"}`, 0, "37170\n", 0, 0},
		{"pydantic-web-fetch-turn1.response.json", runlet.HostedWebFetch, "web_fetch", `{"url":"https://ai.pydantic.dev"}`, 1, "", 0, 0},
	} {
		t.Run(tt.file, func(t *testing.T) {
			body := readFixture(t, tt.file)
			_, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: body})
			resp, err := m.Generate(ctxTimeout(t), userRequest("x"))
			if err != nil {
				t.Fatal(err)
			}
			hosted := hostedParts(resp.Message)
			if len(hosted) != 1 {
				t.Fatalf("hosted parts %+v", hosted)
			}
			h := hosted[0]
			if h.Kind != tt.kind || h.Name != tt.name || string(h.Input) != tt.input || len(h.Sources) != tt.sources ||
				h.Output != tt.output || h.IsError || h.Provider != "anthropic" || !strings.HasPrefix(h.ID, "srvtoolu_") {
				t.Errorf("part = %s %s %s %s sources %d output %q", h.ID, h.Kind, h.Name, h.Input, len(h.Sources), h.Output)
			}
			for _, it := range rawItems(t, h.Raw) {
				if !bytes.Contains(body, []byte(it)) {
					t.Errorf("raw item is not the body's bytes: %.200s", it)
				}
			}
			cited := 0
			for _, p := range resp.Message.Parts {
				if tp, ok := p.(runlet.TextPart); ok && len(tp.Citations) > 0 {
					cited++
					for _, c := range tp.Citations {
						if !bytes.Contains(body, c.Raw) || c.URL == "" {
							t.Errorf("citation %+v", c)
						}
					}
				}
			}
			if tt.cited < 0 {
				var w struct {
					Content []struct {
						Citations []json.RawMessage `json:"citations"`
					} `json:"content"`
				}
				_ = json.Unmarshal(body, &w)
				tt.cited = 0
				for _, b := range w.Content {
					if len(b.Citations) > 0 {
						tt.cited++
					}
				}
			}
			if cited != tt.cited || (tt.kind == runlet.HostedWebSearch && cited == 0) {
				t.Errorf("%d cited text parts, want %d", cited, tt.cited)
			}
			if resp.Usage.WebSearchRequests != tt.searches {
				t.Errorf("usage %+v", resp.Usage)
			}
		})
	}
}

// The next turn sends the server tool's blocks back as they came and the
// text with its web search citations: against the request pydantic-ai sent
// for the recorded second turn (which drops the citations, so those are
// checked against the first turn's answer).
func TestServerToolRoundTrip(t *testing.T) {
	srv, m := newServerModel(t, Config{Model: "claude-sonnet-4-0"},
		runlettest.AnthropicResponse{Body: readFixture(t, "pydantic-web-search-turn1.response.json")},
		runlettest.AnthropicResponse{Body: readFixture(t, "pydantic-web-search-turn2.response.json")})
	req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("What is the weather in San Francisco today?")},
		HostedTools: []runlet.HostedTool{runlet.WebSearch()}}
	first, err := m.Generate(ctxTimeout(t), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, first.Message, runlet.UserText("how about Mexico City?"))
	if _, err := m.Generate(ctxTimeout(t), req); err != nil {
		t.Fatal(err)
	}
	var sent, ref struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(readFixture(t, "pydantic-web-search-turn2.request.json"), &ref); err != nil {
		t.Fatal(err)
	}
	if len(sent.Tools) != 1 || sent.Tools[0]["type"] != ref.Tools[0]["type"] || sent.Tools[0]["name"] != ref.Tools[0]["name"] {
		t.Errorf("tools %v, recorded %v", sent.Tools, ref.Tools)
	}
	if len(sent.Messages) != 3 || len(sent.Messages[1].Content) != len(ref.Messages[1].Content) {
		t.Fatalf("sent %d messages", len(sent.Messages))
	}
	var firstBody struct {
		Content []json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(readFixture(t, "pydantic-web-search-turn1.response.json"), &firstBody)
	for i, got := range sent.Messages[1].Content {
		var g, w, answer map[string]any
		_ = json.Unmarshal(got, &g)
		_ = json.Unmarshal(ref.Messages[1].Content[i], &w)
		_ = json.Unmarshal(firstBody.Content[i], &answer)
		if c, ok := answer["citations"]; ok { // sent back; pydantic-ai drops them
			w["citations"] = c
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("block %d\n sent %.300s\n want %.300v", i, got, w)
		}
	}
	if !bytes.Contains(srv.Requests()[1].Body, []byte(`"Eo8BCioIBxgCIiQ0NGFlNjc2Yy05NThmLTRkNjgtOTEwOC1lYWU5ZGU3YjM2NmISDNPrwrtV82S39TBtUxoM9OkESVCLqFIhGNWNIjApHhwZq58odSIAc5nQHEhQBfNwFHrpQpbkerxt3aYCRE+4AgDlX+pT8ZzljoUJKlsqE58zTWv5W9dV59ikkUJ6StlyfaMYBA=="`)) {
		t.Error("a citation's encrypted_index did not go back")
	}
}

// Another provider's hosted tool part and citations, given to this
// adapter: the part goes as assistant text, the citations are dropped,
// and the request stays valid. A part of this provider whose Raw is
// damaged (a store row edited) goes as text too.
func TestServerToolDowngrade(t *testing.T) {
	foreign := runlet.HostedToolPart{ID: "ws_1", Kind: runlet.HostedWebSearch, Name: "web_search_call", Input: json.RawMessage(`{"query":"q"}`),
		Sources: []runlet.Citation{{URL: "https://a.example", Title: "A"}}, Provider: "openai", Raw: json.RawMessage(`[{"type":"web_search_call","id":"ws_1"}]`)}
	damaged := runlet.HostedToolPart{ID: "srvtoolu_9", Name: "web_search", Provider: "anthropic", Raw: json.RawMessage(`[{"type":`)}
	srv, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("ok")}})
	_, err := m.Generate(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("q"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{foreign, damaged, runlet.TextPart{Text: "A says so.",
			Citations: []runlet.Citation{{URL: "https://a.example", Provider: "openai", Raw: json.RawMessage(`{"type":"url_citation"}`)}}}}},
		runlet.UserText("more"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(srv.Requests()[0].Body, &body)
	want := []map[string]any{
		{"type": "text", "text": foreign.Text()},
		{"type": "text", "text": damaged.Text()},
		{"type": "text", "text": "A says so."},
	}
	if len(body.Messages) != 3 || !reflect.DeepEqual(body.Messages[1].Content, want) {
		t.Errorf("assistant content %v", body.Messages)
	}
}

// The common kinds become the API's declarations, with their betas and
// options; a pass-through declaration goes only to its provider; a kind
// the API lacks is an ErrInvalidRequest.
func TestHostedToolDeclarations(t *testing.T) {
	srv, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("ok")}})
	req := userRequest("x")
	req.Tools = []runlet.ToolSpec{{Name: "f"}}
	req.HostedTools = []runlet.HostedTool{
		{Kind: runlet.HostedWebSearch, Options: map[string]any{"max_uses": 3}},
		runlet.CodeExecution(),
		{Kind: runlet.HostedWebFetch},
		{Provider: "anthropic", Declaration: json.RawMessage(`{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`)},
		{Provider: "openai", Declaration: json.RawMessage(`{"type":"file_search"}`)},
	}
	if _, err := m.Generate(ctxTimeout(t), req); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	var body struct {
		Tools []map[string]any `json:"tools"`
	}
	_ = json.Unmarshal(r.Body, &body)
	want := []map[string]any{
		{"type": "web_search_20250305", "name": "web_search", "max_uses": 3.0},
		{"type": "code_execution_20250825", "name": "code_execution"},
		{"type": "web_fetch_20250910", "name": "web_fetch"},
		{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
	}
	if len(body.Tools) != 5 || !reflect.DeepEqual(body.Tools[:4], want) || body.Tools[4]["name"] != "f" {
		t.Errorf("tools %v", body.Tools)
	}
	if got := r.Header.Get("Anthropic-Beta"); got != "code-execution-2025-08-25,web-fetch-2025-09-10" {
		t.Errorf("anthropic-beta %q", got)
	}
	for _, bad := range []runlet.HostedTool{{Kind: "image_generation"}, {Provider: "anthropic", Declaration: json.RawMessage(`[1]`)}} {
		req.HostedTools = []runlet.HostedTool{bad}
		_, err := m.Generate(ctxTimeout(t), req)
		if !errors.Is(err, runlet.ErrInvalidRequest) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// A text block whose citations come whole in content_block_start (a
// proxy's, or the fake server's without deltas) keeps them; with
// citations_delta after, both count.
func TestStreamCitationsInStartBlock(t *testing.T) {
	body := sseBody(
		"message_start", evStart,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Go 1.26","citations":[{"type":"web_search_result_location","url":"https://go.dev","title":"Go"}]}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://go.dev/doc"}}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
		"message_stop", evStop,
	)
	_, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: body})
	_, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
	if err != nil {
		t.Fatal(err)
	}
	tp, ok := resp.Message.Parts[0].(runlet.TextPart)
	if !ok || len(resp.Message.Parts) != 1 || tp.Text != "Go 1.26" || len(tp.Citations) != 2 ||
		tp.Citations[0].URL != "https://go.dev" || tp.Citations[1].URL != "https://go.dev/doc" {
		t.Fatalf("parts %+v", resp.Message.Parts)
	}
}

// A HostedToolPart whose Raw was edited into other blocks (a tool_use, a
// thinking block with a signature) is sent as text, never as those blocks.
func TestServerToolRawOnlyServerBlocks(t *testing.T) {
	forged := runlet.HostedToolPart{Name: "web_search", Provider: "anthropic",
		Raw: json.RawMessage(`[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}},{"type":"thinking","thinking":"x","signature":"forged"}]`)}
	srv, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("ok")}})
	if _, err := m.Generate(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("q"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{forged}}, runlet.UserText("more")}}); err != nil {
		t.Fatal(err)
	}
	if body := string(srv.Requests()[0].Body); strings.Contains(body, `"signature":"forged"`) && !strings.Contains(body, `\"signature\":\"forged\"`) {
		t.Errorf("a forged block went out as a block: %s", body)
	}
}
