package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/runlet/runlet"
)

// Built-in tools of the Responses API (web search, file search, code
// interpreter, ...), asked for with runlet.HostedTool, and what they leave
// in a response: their output items, kept whole as runlet.HostedToolParts,
// and the annotations of output_text, as runlet.Citations.

// respHostedKinds are the output item types of tools OpenAI runs itself,
// with their common kind ("" for none). Other item types (function calls,
// and the tools the client runs: computer, shell, apply_patch, ...) are not
// hosted tools.
var respHostedKinds = map[string]runlet.HostedToolKind{
	"web_search_call":       runlet.HostedWebSearch,
	"code_interpreter_call": runlet.HostedCodeExecution,
	"file_search_call":      "",
	"image_generation_call": "",
	"mcp_call":              "",
	"mcp_list_tools":        "",
}

func respHostedItem(typ string) bool { _, ok := respHostedKinds[typ]; return ok }

// respHostedTools returns the tool declarations for hosted, in order, and
// the include values that make their output items complete. A
// Declaration for another provider is left out; a kind the API lacks is an
// error.
func (m *Responses) respHostedTools(hosted []runlet.HostedTool) (tools []any, include []string, err error) {
	for i, h := range hosted {
		if len(h.Declaration) > 0 {
			if h.Provider != m.r.name {
				continue
			}
			decl := bytes.TrimSpace(h.Declaration)
			if len(decl) == 0 || decl[0] != '{' || !json.Valid(decl) {
				return nil, nil, fmt.Errorf("hosted tool %d: declaration is not a JSON object", i)
			}
			tools = append(tools, json.RawMessage(decl))
			continue
		}
		t := make(map[string]any, len(h.Options)+2)
		switch h.Kind {
		case runlet.HostedWebSearch:
			t["type"] = "web_search"
			include = append(include, "web_search_call.action.sources")
		case runlet.HostedCodeExecution:
			t["type"], t["container"] = "code_interpreter", map[string]any{"type": "auto"}
			include = append(include, "code_interpreter_call.outputs")
		default:
			return nil, nil, fmt.Errorf("hosted tool %d: kind %q is not offered by the Responses API", i, h.Kind)
		}
		for k, v := range h.Options {
			t[k] = v
		}
		tools = append(tools, t)
	}
	return tools, include, nil
}

// respHostedWire is what the adapter reads of a hosted tool's item.
type respHostedWire struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Action json.RawMessage `json:"action"` // web_search_call
	// code_interpreter_call
	Code    *string `json:"code"`
	Outputs []struct {
		Type string `json:"type"`
		Logs string `json:"logs"`
		URL  string `json:"url"`
	} `json:"outputs"`
	// file_search_call
	Queries []string `json:"queries"`
	Results []struct {
		FileID   string `json:"file_id"`
		Filename string `json:"filename"`
		Text     string `json:"text"`
	} `json:"results"`
	// mcp_call
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    *string         `json:"output"`
	Error     json.RawMessage `json:"error"`
}

// respHostedPart makes the part for a hosted tool's output item, kept
// whole (raw is its bytes as received).
func respHostedPart(provider string, raw json.RawMessage) runlet.HostedToolPart {
	var w respHostedWire
	_ = json.Unmarshal(raw, &w) // what does not fit stays unread: the item is in Raw
	p := runlet.HostedToolPart{ID: w.ID, Kind: respHostedKinds[w.Type], Name: w.Type, Provider: provider,
		IsError: w.Status == "failed" || (len(w.Error) > 0 && string(w.Error) != "null"),
		Raw:     append(append(append(json.RawMessage{}, '['), bytes.TrimSpace(raw)...), ']')}
	switch w.Type {
	case "web_search_call":
		var a struct {
			URL     string `json:"url"`
			Sources []struct {
				URL   string `json:"url"`
				Title string `json:"title"`
			} `json:"sources"`
		}
		if len(w.Action) > 0 && json.Unmarshal(w.Action, &a) == nil {
			p.Input = compactJSON(w.Action)
			for _, s := range a.Sources {
				p.Sources = append(p.Sources, runlet.Citation{URL: s.URL, Title: s.Title})
			}
			if a.URL != "" && len(a.Sources) == 0 { // open_page, find_in_page
				p.Sources = append(p.Sources, runlet.Citation{URL: a.URL})
			}
		}
	case "code_interpreter_call":
		if w.Code != nil {
			p.Input, _ = json.Marshal(map[string]string{"code": *w.Code})
		}
		var out strings.Builder
		for _, o := range w.Outputs {
			switch o.Type {
			case "logs":
				out.WriteString(o.Logs)
			case "image":
				fmt.Fprintf(&out, "[image %s]", o.URL)
			}
		}
		p.Output = out.String()
	case "file_search_call":
		if w.Queries != nil {
			p.Input, _ = json.Marshal(map[string][]string{"queries": w.Queries})
		}
		for _, r := range w.Results {
			p.Sources = append(p.Sources, runlet.Citation{FileID: r.FileID, Title: r.Filename, CitedText: r.Text})
		}
	case "mcp_call":
		p.Name = "mcp_call " + w.Name
		if json.Valid([]byte(w.Arguments)) {
			p.Input = compactJSON(json.RawMessage(w.Arguments))
		}
		if w.Output != nil {
			p.Output = *w.Output
		}
	}
	return p
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// respAnnotation is what the adapter reads of an output_text annotation.
type respAnnotation struct {
	Type       string `json:"type"`
	URL        string `json:"url"`
	Title      string `json:"title"`
	FileID     string `json:"file_id"`
	Filename   string `json:"filename"`
	StartIndex *int   `json:"start_index"`
	EndIndex   *int   `json:"end_index"`
	Index      *int   `json:"index"`
}

// respCitations converts the annotations of a message's content parts,
// whose text is the parts' texts joined, into citations. The API counts
// indexes in characters of the part's text; a Citation counts bytes of
// the joined text.
func respCitations(provider string, parts []respOutPart) []runlet.Citation {
	var out []runlet.Citation
	offset := 0 // bytes of the joined text before this part
	for i := range parts {
		c := &parts[i]
		text := c.Text + c.Refusal
		for _, raw := range c.Annotations {
			var a respAnnotation
			if json.Unmarshal(raw, &a) != nil {
				continue
			}
			cit := runlet.Citation{URL: a.URL, Title: a.Title, FileID: a.FileID, Provider: provider,
				Raw: append(json.RawMessage(nil), raw...)}
			if cit.Title == "" {
				cit.Title = a.Filename
			}
			switch {
			case a.StartIndex != nil && a.EndIndex != nil:
				cit.Start = offset + runeOffset(text, *a.StartIndex)
				cit.End = offset + runeOffset(text, *a.EndIndex)
			case a.Index != nil: // a file citation points at one place
				cit.Start = offset + runeOffset(text, *a.Index)
				cit.End = cit.Start
			}
			out = append(out, cit)
		}
		offset += len(text)
	}
	return out
}

// runeOffset returns the byte offset of the n-th character of s (len(s)
// past its end, 0 for a negative n).
func runeOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	i := 0
	for i < len(s) && n > 0 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n--
	}
	return i
}

// respHistoryHasHosted reports whether msgs hold what only the encoding/json
// path writes: hosted tool parts or citations.
func respHistoryHasHosted(msgs []runlet.Message) bool {
	for _, msg := range msgs {
		if msg.Role != runlet.RoleAssistant {
			continue
		}
		for _, p := range msg.Parts {
			switch p := p.(type) {
			case runlet.HostedToolPart:
				return true
			case runlet.TextPart:
				if len(p.Citations) > 0 {
					return true
				}
			}
		}
	}
	return false
}

// respHostedItems returns the items a hosted tool part this adapter made
// goes back as (its Raw, unchanged), or false for another provider's part
// or one whose Raw is not a list of JSON objects.
func (m *Responses) respHostedItems(p runlet.HostedToolPart) ([]json.RawMessage, bool) {
	if p.Provider != m.r.name || len(p.Raw) == 0 {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(p.Raw, &items) != nil || len(items) == 0 {
		return nil, false
	}
	for _, it := range items {
		it = bytes.TrimSpace(it)
		var head struct {
			Type string `json:"type"`
		}
		// Only built-in tool items: a Raw edited into another item (a
		// store row is input) is not sent as one.
		if len(it) < 2 || it[0] != '{' || json.Unmarshal(it, &head) != nil || !respHostedItem(head.Type) {
			return nil, false
		}
	}
	return items, true
}

// respSentAnnotations returns the annotations of a text part that go back
// with it: this adapter's, as received.
func (m *Responses) respSentAnnotations(cs []runlet.Citation) []any {
	out := []any{}
	for _, c := range cs {
		if c.Provider == m.r.name && len(c.Raw) > 0 && json.Valid(c.Raw) && bytes.TrimSpace(c.Raw)[0] == '{' {
			out = append(out, json.RawMessage(c.Raw))
		}
	}
	return out
}
