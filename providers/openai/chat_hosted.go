package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/runlet/runlet"
)

// Hosted tools in Chat Completions: web search, for the models that search
// (web_search_options), the url_citation annotations of their answers as
// runlet.Citations, and pass-through tool declarations for compatible
// servers' own tools (OpenRouter's "openrouter:web_search", ...).

// chatHostedTools returns the request's web_search_options (nil when none
// is asked for) and the declarations of pass-through tools for this
// provider. The API has no other hosted tool: another kind is an error.
func chatHostedTools(hosted []runlet.HostedTool, provider string) (webSearch json.RawMessage, decls []json.RawMessage, err error) {
	for i, h := range hosted {
		if len(h.Declaration) > 0 {
			if h.Provider != provider {
				continue
			}
			decl := bytes.TrimSpace(h.Declaration)
			if len(decl) == 0 || decl[0] != '{' || !json.Valid(decl) {
				return nil, nil, fmt.Errorf("hosted tool %d: declaration is not a JSON object", i)
			}
			decls = append(decls, decl)
			continue
		}
		if h.Kind != runlet.HostedWebSearch {
			return nil, nil, fmt.Errorf("hosted tool %d: kind %q is not offered by the Chat Completions API (use the Responses API)", i, h.Kind)
		}
		opts := h.Options
		if opts == nil {
			opts = map[string]any{}
		}
		if webSearch, err = json.Marshal(opts); err != nil {
			return nil, nil, fmt.Errorf("hosted tool %d (web_search): options: %w", i, err)
		}
	}
	return webSearch, decls, nil
}

// chatAnnotation is what the adapter reads of a message annotation.
type chatAnnotation struct {
	Type        string `json:"type"`
	URLCitation struct {
		URL        string `json:"url"`
		Title      string `json:"title"`
		StartIndex int    `json:"start_index"`
		EndIndex   int    `json:"end_index"`
	} `json:"url_citation"`
}

// chatCitations converts a message's annotations (a JSON array) into
// citations of text: the API's character indexes become byte offsets; an
// annotation without a span (0, 0: OpenRouter's) cites the whole text.
func chatCitations(provider string, annotations json.RawMessage, text string) []runlet.Citation {
	var raws []json.RawMessage
	if len(bytes.TrimSpace(annotations)) == 0 || json.Unmarshal(annotations, &raws) != nil {
		return nil
	}
	return chatCitationList(provider, raws, text)
}

// chatCitationList is chatCitations of annotations already split.
func chatCitationList(provider string, raws []json.RawMessage, text string) []runlet.Citation {
	var out []runlet.Citation
	for _, raw := range raws {
		var a chatAnnotation
		if json.Unmarshal(raw, &a) != nil || a.Type != "url_citation" {
			continue
		}
		u := a.URLCitation
		c := runlet.Citation{URL: u.URL, Title: u.Title, Provider: provider, Raw: append(json.RawMessage(nil), bytes.TrimSpace(raw)...)}
		if u.EndIndex > u.StartIndex {
			c.Start, c.End = runeOffset(text, u.StartIndex), runeOffset(text, u.EndIndex)
		}
		out = append(out, c)
	}
	return out
}

// chatHostedAsText returns parts with each runlet.HostedToolPart (another
// API's built-in tool: Chat Completions has no such items) replaced by
// its text, parts itself when there is none.
func chatHostedAsText(parts []runlet.Part) []runlet.Part {
	var out []runlet.Part
	for i, p := range parts {
		h, ok := p.(runlet.HostedToolPart)
		if !ok {
			if out != nil {
				out = append(out, p)
			}
			continue
		}
		if out == nil {
			out = append(make([]runlet.Part, 0, len(parts)), parts[:i]...)
		}
		out = append(out, runlet.TextPart{Text: h.Text() + "\n"})
	}
	if out == nil {
		return parts
	}
	return out
}

// chatAttachCitations puts citations on the message's last text part.
func chatAttachCitations(msg *runlet.Message, cs []runlet.Citation) {
	if len(cs) == 0 {
		return
	}
	for i := len(msg.Parts) - 1; i >= 0; i-- {
		if t, ok := msg.Parts[i].(runlet.TextPart); ok {
			t.Citations = append(t.Citations, cs...)
			msg.Parts[i] = t
			return
		}
	}
	msg.Parts = append(msg.Parts, runlet.TextPart{Citations: cs})
}
