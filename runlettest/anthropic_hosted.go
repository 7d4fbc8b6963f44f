package runlettest

import "encoding/json"

// Server tools on the fake Anthropic server: the blocks of a web search
// Anthropic ran, and text citing its results, as the Messages API sends
// them (see the adapter's testdata for recorded ones).

// AnthropicSearchResult is one result of a scripted web search.
type AnthropicSearchResult struct {
	URL, Title string
	// EncryptedContent is the opaque page content the API sends back and
	// wants back; any string will do.
	EncryptedContent string
}

// AnthropicWebSearch returns the blocks of a web search the API ran: a
// server_tool_use block with the query and the web_search_tool_result
// block with the results.
func AnthropicWebSearch(id, query string, results ...AnthropicSearchResult) []AnthropicBlock {
	call, _ := json.Marshal(map[string]any{"type": "server_tool_use", "id": id, "name": "web_search", "input": map[string]string{"query": query}})
	items := make([]map[string]any, 0, len(results))
	for _, r := range results {
		items = append(items, map[string]any{"type": "web_search_result", "url": r.URL, "title": r.Title,
			"encrypted_content": r.EncryptedContent, "page_age": nil})
	}
	result, _ := json.Marshal(map[string]any{"type": "web_search_tool_result", "tool_use_id": id, "content": items})
	return []AnthropicBlock{{Type: "server_tool_use", Raw: call}, {Type: "web_search_tool_result", Raw: result}}
}

// AnthropicCitedText returns a text block citing search results: each a
// web_search_result_location citation with the result's URL and title,
// the quoted text and an encrypted_index.
func AnthropicCitedText(text string, cited ...AnthropicSearchResult) AnthropicBlock {
	b := AnthropicBlock{Type: "text", Text: text}
	for _, r := range cited {
		c, _ := json.Marshal(map[string]string{"type": "web_search_result_location", "url": r.URL, "title": r.Title,
			"cited_text": text, "encrypted_index": r.EncryptedContent})
		b.Citations = append(b.Citations, c)
	}
	return b
}

// textJSON is a text block, with its citations when it has some.
func (b AnthropicBlock) textJSON() any {
	if len(b.Citations) == 0 {
		return struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text}
	}
	return struct {
		Type      string            `json:"type"`
		Text      string            `json:"text"`
		Citations []json.RawMessage `json:"citations"`
	}{b.Type, b.Text, b.Citations}
}

// citationDelta is the citations_delta event of block i for one citation.
func citationDelta(i int, c json.RawMessage) any {
	return struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Delta struct {
			Type     string          `json:"type"`
			Citation json.RawMessage `json:"citation"`
		} `json:"delta"`
	}{"content_block_delta", i, struct {
		Type     string          `json:"type"`
		Citation json.RawMessage `json:"citation"`
	}{"citations_delta", c}}
}
