package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runlet/runlet"
)

// Gemini's built-in tools (Google Search grounding, code execution, URL
// context), asked for with runlet.HostedTool, and what they leave in a
// response: executableCode and codeExecutionResult parts, kept whole as a
// runlet.HostedToolPart, and a candidate's groundingMetadata and
// urlContextMetadata, as HostedToolParts for the searches and fetches and
// Citations on the text.

// hostedTools maps the common kinds to the Tool field that declares them.
var hostedTools = map[runlet.HostedToolKind]string{
	runlet.HostedWebSearch:     "googleSearch",
	runlet.HostedCodeExecution: "codeExecution",
	runlet.HostedWebFetch:      "urlContext",
}

// appendHostedTools writes a Tool object for each hosted tool (its Options
// as the tool's configuration), each after a comma unless it is the first
// of the list, and reports whether the list is still empty. Another
// provider's Declaration is left out.
func (m *Model) appendHostedTools(b []byte, hosted []runlet.HostedTool, first bool) ([]byte, bool, error) {
	for i, h := range hosted {
		var decl []byte
		if len(h.Declaration) > 0 {
			if !m.own(h.Provider) {
				continue
			}
			decl = bytes.TrimSpace(h.Declaration)
			if len(decl) == 0 || decl[0] != '{' || !json.Valid(decl) {
				return nil, first, fmt.Errorf("hosted tool %d: declaration is not a JSON object", i)
			}
		} else {
			field, ok := hostedTools[h.Kind]
			if !ok {
				return nil, first, fmt.Errorf("hosted tool %d: kind %q is not offered by the Gemini API", i, h.Kind)
			}
			opts := h.Options
			if opts == nil {
				opts = map[string]any{}
			}
			var err error
			if decl, err = json.Marshal(map[string]any{field: opts}); err != nil {
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

// codePart adds a part of code execution (p.ExecutableCode or
// p.CodeExecutionResult set; raw is the part as received): a call starts a
// HostedToolPart, its result completes the one before it.
func (a *assembler) codePart(p *wirePart) {
	raw := bytes.TrimSpace(p.Raw)
	if p.ExecutableCode != nil {
		a.parts = append(a.parts, runlet.HostedToolPart{Kind: runlet.HostedCodeExecution, Name: "code_execution",
			Input: compact(p.ExecutableCode), Provider: a.name, Raw: appendItem(nil, raw)})
		return
	}
	var res struct {
		Outcome string `json:"outcome"`
		Output  string `json:"output"`
	}
	_ = json.Unmarshal(p.CodeExecutionResult, &res) // what does not fit stays in Raw
	if n := len(a.parts); n > 0 {
		if h, ok := a.parts[n-1].(runlet.HostedToolPart); ok && h.Kind == runlet.HostedCodeExecution && h.Output == "" && !h.IsError {
			h.Output, h.IsError, h.Raw = res.Output, res.Outcome != "" && res.Outcome != "OUTCOME_OK", appendItem(h.Raw, raw)
			a.parts[n-1] = h
			return
		}
	}
	a.parts = append(a.parts, runlet.HostedToolPart{Kind: runlet.HostedCodeExecution, Name: "code_execution",
		Output: res.Output, IsError: res.Outcome != "" && res.Outcome != "OUTCOME_OK", Provider: a.name, Raw: appendItem(nil, raw)})
}

// appendItem appends one JSON value to a JSON array held in arr.
func appendItem(arr, item json.RawMessage) json.RawMessage {
	if len(arr) == 0 {
		return append(append(append(json.RawMessage{}, '['), item...), ']')
	}
	out := append(json.RawMessage{}, arr[:len(arr)-1]...)
	out = append(out, ',')
	out = append(out, item...)
	return append(out, ']')
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// wireGrounding is what the adapter reads of groundingMetadata.
type wireGrounding struct {
	WebSearchQueries []string `json:"webSearchQueries"`
	GroundingChunks  []struct {
		Web *struct {
			URI   string `json:"uri"`
			Title string `json:"title"`
		} `json:"web"`
		RetrievedContext *struct {
			URI   string `json:"uri"`
			Title string `json:"title"`
			Text  string `json:"text"`
		} `json:"retrievedContext"`
	} `json:"groundingChunks"`
	GroundingSupports []struct {
		Segment struct {
			PartIndex  int    `json:"partIndex"`
			StartIndex int    `json:"startIndex"`
			EndIndex   int    `json:"endIndex"`
			Text       string `json:"text"`
		} `json:"segment"`
		GroundingChunkIndices []int `json:"groundingChunkIndices"`
	} `json:"groundingSupports"`
}

// wireURLContext is what the adapter reads of urlContextMetadata.
type wireURLContext struct {
	URLMetadata []struct {
		RetrievedURL       string `json:"retrievedUrl"`
		URLRetrievalStatus string `json:"urlRetrievalStatus"`
	} `json:"urlMetadata"`
}

// grounded adds what the candidate's metadata tells to parts: a
// HostedToolPart for the searches (webSearchQueries, the chunks as
// Sources) and one for the URLs fetched, before the first text part, and
// each grounding support as a Citation of the text part its segment is
// in. Neither part has Raw: Gemini takes no grounding back. It returns
// the number of searches.
func grounded(name string, parts []runlet.Part, grounding, urlContext json.RawMessage) ([]runlet.Part, int) {
	var g wireGrounding
	var u wireURLContext
	_ = json.Unmarshal(grounding, &g) // nothing readable: no citations
	_ = json.Unmarshal(urlContext, &u)
	sources := make([]runlet.Citation, len(g.GroundingChunks))
	known := make([]bool, len(g.GroundingChunks)) // a chunk of a kind read above
	var listed []runlet.Citation
	for i, c := range g.GroundingChunks {
		switch {
		case c.Web != nil:
			sources[i], known[i] = runlet.Citation{URL: c.Web.URI, Title: c.Web.Title}, true
		case c.RetrievedContext != nil:
			sources[i], known[i] = runlet.Citation{URL: c.RetrievedContext.URI, Title: c.RetrievedContext.Title, CitedText: c.RetrievedContext.Text}, true
		}
		if known[i] {
			listed = append(listed, sources[i])
		}
	}
	var front []runlet.Part
	if len(g.WebSearchQueries) > 0 {
		in, _ := json.Marshal(map[string][]string{"queries": g.WebSearchQueries})
		front = append(front, runlet.HostedToolPart{Kind: runlet.HostedWebSearch, Name: "google_search", Input: in,
			Sources: listed, Provider: name})
	}
	if len(u.URLMetadata) > 0 {
		h := runlet.HostedToolPart{Kind: runlet.HostedWebFetch, Name: "url_context", Provider: name}
		var failed []string
		for _, md := range u.URLMetadata {
			h.Sources = append(h.Sources, runlet.Citation{URL: md.RetrievedURL})
			if md.URLRetrievalStatus != "" && md.URLRetrievalStatus != "URL_RETRIEVAL_STATUS_SUCCESS" {
				failed = append(failed, md.RetrievedURL+": "+md.URLRetrievalStatus)
			}
		}
		if len(failed) > 0 {
			h.Output, h.IsError = strings.Join(failed, "\n"), len(failed) == len(u.URLMetadata)
		}
		front = append(front, h)
	}
	// Citations: a segment's offsets are bytes of the text (of the text
	// part partIndex counts, else of the answer's text as a whole).
	var texts []int // indexes in parts of the text parts
	for i, p := range parts {
		if _, ok := p.(runlet.TextPart); ok {
			texts = append(texts, i)
		}
	}
	for _, s := range g.GroundingSupports {
		at, start, end, ok := locate(parts, texts, s.Segment.PartIndex, s.Segment.StartIndex, s.Segment.EndIndex, s.Segment.Text)
		if !ok {
			continue
		}
		t := parts[at].(runlet.TextPart)
		for _, ci := range s.GroundingChunkIndices {
			if ci < 0 || ci >= len(sources) || !known[ci] {
				continue
			}
			c := sources[ci]
			c.Start, c.End, c.Provider = start, end, name
			t.Citations = append(t.Citations, c)
		}
		parts[at] = t
	}
	if len(front) > 0 {
		i := 0
		for i < len(parts) {
			if _, ok := parts[i].(runlet.ReasoningPart); !ok {
				break
			}
			i++
		}
		parts = append(parts[:i], append(front, parts[i:]...)...)
	}
	return parts, len(g.WebSearchQueries)
}

// locate finds the text part and the byte span of a grounding segment:
// the offsets when they cut out the segment's text (in the part partIndex
// counts, or in the answer's text parts taken together), else where the
// text is found. ok is false when it is nowhere.
func locate(parts []runlet.Part, texts []int, partIndex, start, end int, text string) (at, s, e int, ok bool) {
	if len(texts) == 0 {
		return 0, 0, 0, false
	}
	fits := func(t string, s, e int) bool {
		return s >= 0 && s <= e && e <= len(t) && (text == "" || t[s:e] == text)
	}
	if partIndex > 0 && partIndex < len(texts) {
		if t := parts[texts[partIndex]].(runlet.TextPart).Text; fits(t, start, end) {
			return texts[partIndex], start, end, true
		}
	}
	offset := 0
	for _, i := range texts {
		t := parts[i].(runlet.TextPart).Text
		if start >= offset && end <= offset+len(t) && fits(t, start-offset, end-offset) {
			return i, start - offset, end - offset, true
		}
		offset += len(t)
	}
	if text == "" {
		return 0, 0, 0, false
	}
	for _, i := range texts {
		if k := strings.Index(parts[i].(runlet.TextPart).Text, text); k >= 0 {
			return i, k, k + len(text), true
		}
	}
	return 0, 0, 0, false
}

// hostedParts returns the parts a HostedToolPart this adapter made goes
// back as (its Raw items: code execution), none for one without items
// (grounding, which Gemini takes no part for), and false for another
// provider's part or a damaged one, which goes as text.
func (m *Model) hostedParts(p runlet.HostedToolPart) ([]json.RawMessage, bool) {
	if !m.own(p.Provider) {
		return nil, false
	}
	if len(p.Raw) == 0 {
		return nil, true
	}
	var items []json.RawMessage
	if json.Unmarshal(p.Raw, &items) != nil {
		return nil, false
	}
	for i, it := range items {
		it = bytes.TrimSpace(it)
		// Only code execution parts: a Raw edited into another part (a
		// store row is input) is not sent as one.
		var part wirePart
		if len(it) < 2 || it[0] != '{' || json.Unmarshal(it, &part) != nil ||
			(part.ExecutableCode == nil && part.CodeExecutionResult == nil) || part.FunctionCall != nil || part.Text != nil {
			return nil, false
		}
		items[i] = it
	}
	return items, true
}
