package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runlet/runlet"
)

// Server tools: the tools Anthropic runs itself (web search, web fetch,
// code execution), asked for with runlet.HostedTool, and what they leave
// in a response (server_tool_use blocks and their *_tool_result blocks,
// citations on text blocks).

// hostedDeclaration is the tool declaration for a runlet.HostedToolKind and
// the anthropic-beta value it needs ("" for none).
var hostedDeclarations = map[runlet.HostedToolKind]struct{ typ, name, beta string }{
	runlet.HostedWebSearch:     {"web_search_20250305", "web_search", ""},
	runlet.HostedWebFetch:      {"web_fetch_20250910", "web_fetch", "web-fetch-2025-09-10"},
	runlet.HostedCodeExecution: {"code_execution_20250825", "code_execution", "code-execution-2025-08-25"},
}

// hostedBetas returns the anthropic-beta values the request's hosted tools
// need.
func hostedBetas(hosted []runlet.HostedTool) []string {
	var betas []string
	for _, h := range hosted {
		if d, ok := hostedDeclarations[h.Kind]; ok && len(h.Declaration) == 0 && d.beta != "" {
			betas = append(betas, d.beta)
		}
	}
	return betas
}

// appendHostedTools writes the declarations of the request's hosted tools,
// each after a comma unless it is the first of the list. A pass-through
// Declaration of another provider is left out.
func (m *Messages) appendHostedTools(b []byte, hosted []runlet.HostedTool, first bool) ([]byte, bool, error) {
	for i, h := range hosted {
		var decl []byte
		switch {
		case len(h.Declaration) > 0:
			if h.Provider != m.cfg.name {
				continue
			}
			decl = bytes.TrimSpace(h.Declaration)
			if len(decl) == 0 || decl[0] != '{' || !json.Valid(decl) {
				return nil, first, fmt.Errorf("hosted tool %d: declaration is not a JSON object", i)
			}
		default:
			d, ok := hostedDeclarations[h.Kind]
			if !ok {
				return nil, first, fmt.Errorf("hosted tool %d: kind %q is not offered by the Messages API", i, h.Kind)
			}
			fields := make(map[string]any, len(h.Options)+2)
			for k, v := range h.Options {
				fields[k] = v
			}
			fields["type"], fields["name"] = d.typ, d.name
			var err error
			if decl, err = json.Marshal(fields); err != nil {
				return nil, first, fmt.Errorf("hosted tool %d (%s): options: %w", i, h.Kind, err)
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, decl...)
	}
	return b, first, nil
}

// hostedCall reports whether a block type is a server tool's call, and
// hostedResult whether it is a server tool's result.
func hostedCall(typ string) bool { return typ == "server_tool_use" || typ == "mcp_tool_use" }
func hostedResult(typ string) bool {
	return strings.HasSuffix(typ, "_tool_result") && typ != "tool_result"
}

// hostedKind maps a server tool's name to the common kind.
func hostedKind(name string) runlet.HostedToolKind {
	switch name {
	case "web_search":
		return runlet.HostedWebSearch
	case "web_fetch":
		return runlet.HostedWebFetch
	case "code_execution", "bash_code_execution", "text_editor_code_execution":
		return runlet.HostedCodeExecution
	}
	return ""
}

// callPart starts the part for a server_tool_use block whose exact bytes
// are raw and whose input is input.
func callPart(name string, b *wireBlock, raw, input json.RawMessage) runlet.HostedToolPart {
	return runlet.HostedToolPart{ID: b.ID, Kind: hostedKind(b.Name), Name: b.Name, Input: input,
		Provider: name, Raw: appendItem(nil, raw)}
}

// addResult adds a result block (exact bytes raw) to parts: to the part of
// the call it answers when that is the last part, else as a part of its own.
func addResult(name string, parts []runlet.Part, b *wireBlock, raw json.RawMessage) []runlet.Part {
	if n := len(parts); n > 0 {
		if p, ok := parts[n-1].(runlet.HostedToolPart); ok && p.ID == b.ToolUseID && p.Provider == name {
			readResult(&p, b.Content)
			p.Raw = appendItem(p.Raw, raw)
			parts[n-1] = p
			return parts
		}
	}
	p := runlet.HostedToolPart{ID: b.ToolUseID, Name: strings.TrimSuffix(b.Type, "_tool_result"), Provider: name, Raw: appendItem(nil, raw)}
	p.Kind = hostedKind(p.Name)
	readResult(&p, b.Content)
	return append(parts, p)
}

// appendItem appends one JSON value to a JSON array held in arr.
func appendItem(arr, item json.RawMessage) json.RawMessage {
	if len(arr) == 0 {
		out := make(json.RawMessage, 0, len(item)+2)
		out = append(out, '[')
		out = append(out, item...)
		return append(out, ']')
	}
	out := make(json.RawMessage, 0, len(arr)+len(item)+1)
	out = append(out, arr[:len(arr)-1]...)
	out = append(out, ',')
	out = append(out, item...)
	return append(out, ']')
}

// resultContent is the part of a result block's content the adapter reads:
// web_search_result items, a web_fetch_result, a code execution result, or
// an error.
type resultContent struct {
	Type       string `json:"type"`
	URL        string `json:"url"`
	Title      string `json:"title"`
	ErrorCode  string `json:"error_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	ReturnCode int    `json:"return_code"`
	// Content is a web_fetch_result's document ({"title": ...}); other
	// results have other content here.
	Content json.RawMessage `json:"content"`
}

// readResult fills p's Sources, Output and IsError from a result block's
// content. Content it cannot read leaves them empty: the block itself is
// kept in Raw either way.
func readResult(p *runlet.HostedToolPart, content json.RawMessage) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return
	}
	if content[0] == '[' {
		var items []resultContent
		if json.Unmarshal(content, &items) != nil {
			return
		}
		for _, it := range items {
			if it.URL != "" {
				p.Sources = append(p.Sources, runlet.Citation{URL: it.URL, Title: it.Title})
			}
		}
		return
	}
	var r resultContent
	if json.Unmarshal(content, &r) != nil {
		return
	}
	switch {
	case strings.HasSuffix(r.Type, "_error"):
		p.IsError, p.Output = true, r.ErrorCode
	case r.URL != "": // web_fetch_result
		title := r.Title
		var doc struct {
			Title string `json:"title"`
		}
		if title == "" && json.Unmarshal(r.Content, &doc) == nil {
			title = doc.Title
		}
		p.Sources = append(p.Sources, runlet.Citation{URL: r.URL, Title: title})
	default: // code execution results
		p.Output = r.Stdout + r.Stderr
		p.IsError = r.ReturnCode != 0
	}
}

// wireCitation is the part of a text block's citation the adapter reads.
type wireCitation struct {
	Type          string `json:"type"`
	URL           string `json:"url"`
	Source        string `json:"source"` // search_result_location
	Title         string `json:"title"`
	DocumentTitle string `json:"document_title"`
	CitedText     string `json:"cited_text"`
	FileID        string `json:"file_id"`
}

// citation converts one citation object, kept whole in Raw. Anthropic cites
// whole text blocks, so Start and End stay zero.
func citation(name string, raw json.RawMessage) (runlet.Citation, bool) {
	var w wireCitation
	if json.Unmarshal(raw, &w) != nil {
		return runlet.Citation{}, false
	}
	c := runlet.Citation{URL: w.URL, Title: w.Title, CitedText: w.CitedText, FileID: w.FileID,
		Provider: name, Raw: append(json.RawMessage(nil), raw...)}
	if c.URL == "" {
		c.URL = w.Source
	}
	if c.Title == "" {
		c.Title = w.DocumentTitle
	}
	return c, true
}

// citations converts a text block's citations.
func citations(name string, raws []json.RawMessage) []runlet.Citation {
	var out []runlet.Citation
	for _, raw := range raws {
		if c, ok := citation(name, raw); ok {
			out = append(out, c)
		}
	}
	return out
}

// sentCitations returns the JSON array of the citations of a text part that
// go back to the API: those of type web_search_result_location this
// adapter made, which the API takes back as they came (with their
// encrypted_index). Others are dropped: the text is sent without them.
func (m *Messages) sentCitations(cs []runlet.Citation) json.RawMessage {
	var arr json.RawMessage
	for _, c := range cs {
		if c.Provider != m.cfg.name || !validObject(c.Raw) {
			continue
		}
		var w wireCitation
		if json.Unmarshal(c.Raw, &w) != nil || w.Type != "web_search_result_location" {
			continue
		}
		arr = appendItem(arr, bytes.TrimSpace(c.Raw))
	}
	return arr
}

// hostedBlocks returns the blocks a hosted tool part made by this adapter
// goes back as (its Raw items, unchanged), or, for another provider's part,
// one without items or one whose items are not server tool blocks, nil
// and false.
func (m *Messages) hostedBlocks(p runlet.HostedToolPart) ([]json.RawMessage, bool) {
	if p.Provider != m.cfg.name || len(p.Raw) == 0 {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(p.Raw, &items) != nil || len(items) == 0 {
		return nil, false
	}
	for i, it := range items {
		it = bytes.TrimSpace(it)
		var head struct {
			Type string `json:"type"`
		}
		// Only server tool blocks: a Raw edited into another block (a
		// store row is input) is not sent as one.
		if !validObject(it) || json.Unmarshal(it, &head) != nil || !hostedCall(head.Type) && !hostedResult(head.Type) {
			return nil, false
		}
		items[i] = it
	}
	return items, true
}

// validObject reports whether raw is one JSON object.
func validObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '{' && json.Valid(raw)
}
