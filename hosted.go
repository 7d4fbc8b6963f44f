package runlet

import (
	"encoding/json"
	"slices"
	"strings"
)

// HostedToolKind names a tool a provider runs on its own side, in the same
// terms for every adapter.
type HostedToolKind string

// The hosted tools the built-in adapters can ask for by kind. Each adapter
// maps a kind to its API's declaration (see each provider's package doc);
// a kind its API does not offer fails the request with ErrInvalidRequest
// rather than being dropped:
//
//	kind            Anthropic                 OpenAI Responses      Chat Completions     Gemini
//	web_search      web_search_20250305       web_search            web_search_options   googleSearch
//	code_execution  code_execution_20250825   code_interpreter      (none)               codeExecution
//	web_fetch       web_fetch_20250910        (none)                (none)               urlContext
const (
	HostedWebSearch     HostedToolKind = "web_search"
	HostedCodeExecution HostedToolKind = "code_execution"
	HostedWebFetch      HostedToolKind = "web_fetch"
)

// HostedTool asks the provider for one of the tools it runs itself (web
// search, code execution, URL fetch, ...). The model calls it on the
// provider's side, within one model call: the runtime runs nothing, and
// what the tool did comes back in the response as a HostedToolPart, with
// the citations it produced on the TextParts (see Citation).
//
// Either Kind names a common tool, which every adapter that offers it
// declares in its own way (Options adds provider-specific fields to that
// declaration, such as "max_uses", "allowed_domains" or "user_location"),
// or Declaration is one provider's own tool declaration, sent as given by
// the adapter named Provider and left out by every other adapter: the
// pass-through for the tools without a kind.
type HostedTool struct {
	Kind    HostedToolKind `json:"kind,omitempty"`
	Options map[string]any `json:"options,omitempty"`
	// Provider and Declaration are the pass-through: Declaration is a JSON
	// object in the provider's own terms, sent as given only by the
	// adapter whose name is Provider ("openai", "anthropic", "gemini",
	// or the name given in its Config).
	Provider    string          `json:"provider,omitempty"`
	Declaration json.RawMessage `json:"declaration,omitempty"`
}

// WebSearch returns the hosted tool asking for the provider's web search.
func WebSearch() HostedTool { return HostedTool{Kind: HostedWebSearch} }

// CodeExecution returns the hosted tool asking for the provider's code
// execution sandbox.
func CodeExecution() HostedTool { return HostedTool{Kind: HostedCodeExecution} }

// HostedToolPart is what a provider-hosted tool did during a model call:
// the call (Input) and its result (Output, Sources), in the assistant
// message, where the provider put it. The runtime does not run it; it is
// history, shown in a HostedToolFinished event and counted in
// Usage.WebSearchRequests where the provider reports a count.
//
// Raw keeps the provider's own items exactly as received (a JSON array:
// Anthropic's server_tool_use block and its result block, an OpenAI
// Responses output item, Gemini's executableCode and codeExecutionResult
// parts), so that the adapter named Provider sends them back unchanged on
// the next turn, encrypted content and signatures included. Another
// adapter sends the part as assistant text instead (see Text), which
// keeps the conversation valid: a provider cannot take another's items.
type HostedToolPart struct {
	// ID is the provider's ID for the call, when it gives one.
	ID string `json:"id,omitempty"`
	// Kind is the common kind, empty for a tool without one.
	Kind HostedToolKind `json:"kind,omitempty"`
	// Name is the provider's name for the tool or item ("web_search",
	// "code_execution", "web_search_call", "code_interpreter_call",
	// "executableCode", ...).
	Name string `json:"name,omitempty"`
	// Input is the call's input as JSON, such as {"query": "..."} or
	// {"code": "..."}, when the provider shows it.
	Input json.RawMessage `json:"input,omitempty"`
	// Output is the result as readable text, such as a program's output,
	// when the provider shows one; Sources are the pages a search or a
	// fetch returned (URL and Title).
	Output  string     `json:"output,omitempty"`
	Sources []Citation `json:"sources,omitempty"`
	// IsError says the tool failed (the provider reported an error result).
	IsError  bool   `json:"is_error,omitempty"`
	Provider string `json:"provider,omitempty"`
	// Raw is the provider's items, a JSON array, sent back only to Provider.
	Raw json.RawMessage `json:"raw,omitempty"`
}

func (HostedToolPart) partType() string { return "hosted_tool" }

// Text renders the part as plain text: what an adapter sends in place of
// another provider's hosted tool, so that the model still sees what was
// searched or run and what came back.
func (p HostedToolPart) Text() string {
	var b strings.Builder
	name := p.Name
	if p.Kind != "" {
		name = string(p.Kind)
	}
	b.WriteString("[hosted tool ")
	b.WriteString(name)
	if len(p.Input) > 0 {
		b.WriteString(" ")
		b.Write(p.Input)
	}
	b.WriteString("]")
	if p.IsError {
		b.WriteString(" failed")
	}
	for _, s := range p.Sources {
		b.WriteString("\n- ")
		if s.Title != "" {
			b.WriteString(s.Title)
			b.WriteString(" ")
		}
		b.WriteString(s.URL)
	}
	if p.Output != "" {
		b.WriteString("\n")
		b.WriteString(p.Output)
	}
	return b.String()
}

// Citation is a source a model cited for a span of its text (on
// TextPart.Citations), or a page a hosted tool returned (on
// HostedToolPart.Sources), in the same terms for every provider.
type Citation struct {
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	// FileID names a cited file instead of a URL (OpenAI file citations).
	FileID string `json:"file_id,omitempty"`
	// CitedText is the source's text the citation quotes, when the
	// provider gives it (Anthropic's cited_text).
	CitedText string `json:"cited_text,omitempty"`
	// Start and End are byte offsets into the TextPart's Text of the span
	// the citation supports; both zero when it supports the whole part
	// (Anthropic cites whole text blocks).
	Start int `json:"start,omitempty"`
	End   int `json:"end,omitempty"`
	// Provider and Raw keep the provider's own citation object exactly as
	// received, sent back only to Provider (Anthropic needs a citation's
	// encrypted_index back); other adapters drop citations.
	Provider string          `json:"provider,omitempty"`
	Raw      json.RawMessage `json:"raw,omitempty"`
}

// Span returns the cited span of text (the TextPart's Text): text[Start:End],
// or all of it when End is zero or the offsets do not fit text.
func (c Citation) Span(text string) string {
	if c.End <= 0 || c.Start < 0 || c.Start > c.End || c.End > len(text) {
		return text
	}
	return text[c.Start:c.End]
}

// clone returns p with its own copies of the byte slices and sources.
func (p HostedToolPart) clone() HostedToolPart {
	p.Input = slices.Clone(p.Input)
	p.Raw = slices.Clone(p.Raw)
	p.Sources = cloneCitations(p.Sources)
	return p
}

// cloneCitations deep-copies cs.
func cloneCitations(cs []Citation) []Citation {
	if cs == nil {
		return nil
	}
	out := slices.Clone(cs)
	for i := range out {
		out[i].Raw = slices.Clone(out[i].Raw)
	}
	return out
}
