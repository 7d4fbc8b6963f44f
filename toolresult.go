package runlet

// What a tool returns beyond text: ToolOutput and its constructors, the
// PartsTool interface, how an output becomes a ToolResultPart (its text,
// parts and structured value, within the output cap), and the result's
// JSON.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ToolOutput is what a tool returns when text is not enough: parts in
// order (TextPart, ImagePart, FilePart, AudioPart; see Text, Image, File
// and Audio), a structured value, or both. A function given to NewTool
// returns one by having Out = ToolOutput; a hand-written Tool by
// implementing PartsTool.
//
// The result the model gets keeps every part (see ToolResultPart): each
// provider adapter sends images, files and audio natively where its API
// takes them in a tool result, by a documented fallback where it does
// not, and otherwise fails with a typed ErrInvalidRequest; never a silent
// drop. The result's Content is the text parts joined, or the structured
// value's JSON when there is no text.
type ToolOutput struct {
	Parts []Part
	// Structured is the tool's structured value: anything encoding/json
	// encodes (a json.RawMessage is used as is).
	Structured any
}

// Output returns a ToolOutput of parts.
func Output(parts ...Part) ToolOutput { return ToolOutput{Parts: parts} }

// StructuredOutput returns a ToolOutput of the structured value v; its
// text (ToolResultPart.Content) is v's JSON.
func StructuredOutput(v any) ToolOutput { return ToolOutput{Structured: v} }

// Text returns a text part.
func Text(text string) TextPart { return TextPart{Text: text} }

// Image returns an inline image part: data of mediaType ("image/png",
// "image/jpeg", "image/gif", "image/webp").
func Image(mediaType string, data []byte) ImagePart {
	return ImagePart{MediaType: mediaType, Data: data}
}

// ImageURL returns an image part by URL.
func ImageURL(url string) ImagePart { return ImagePart{URL: url} }

// File returns an inline file part: a document named name (may be empty)
// of mediaType ("application/pdf", "text/plain", ...).
func File(name, mediaType string, data []byte) FilePart {
	return FilePart{Name: name, MediaType: mediaType, Data: data}
}

// Audio returns an inline audio part of mediaType ("audio/wav",
// "audio/mpeg", ...).
func Audio(mediaType string, data []byte) AudioPart {
	return AudioPart{MediaType: mediaType, Data: data}
}

// PartsTool is a Tool that can return more than text: parts and a
// structured value (see ToolOutput). A run calls CallParts instead of
// Call; Call should return the output's text (what a caller that wants
// text only gets). Tools made by NewTool and Agent.AsTool implement it; a
// wrapper around a Tool should too, passing CallParts on.
type PartsTool interface {
	Tool
	CallParts(ctx context.Context, args json.RawMessage) (ToolOutput, error)
}

// CallParts calls t, through its CallParts when t is a PartsTool, else
// through Call (the text becomes a text-only output). It does not check
// the output; a run does (see ToolResultPart).
func CallParts(ctx context.Context, t Tool, args json.RawMessage) (ToolOutput, error) {
	if ot, ok := t.(PartsTool); ok {
		return ot.CallParts(ctx, args)
	}
	s, err := t.Call(ctx, args)
	if err != nil {
		return ToolOutput{}, err
	}
	return Output(Text(s)), nil
}

// toolRet is what a call returned: text, or an output when it returned
// one (a pointer, so that the common text result costs nothing more).
type toolRet struct {
	s string
	o *ToolOutput
}

// retOf wraps an output.
func retOf(o ToolOutput) toolRet { return toolRet{o: &o} }

// resolved is an output made ready for a ToolResultPart.
type resolved struct {
	content    string
	parts      []Part // nil when text-only
	structured json.RawMessage
}

// resolve checks o and makes its result: the text, the parts (nil when
// they are text only) and the structured value's JSON.
func (o ToolOutput) resolve() (resolved, error) {
	var res resolved
	if o.Structured != nil {
		var b []byte
		var err error
		if raw, ok := o.Structured.(json.RawMessage); ok {
			b = raw
			if !json.Valid(b) {
				err = fmt.Errorf("not valid JSON")
			}
		} else {
			b, err = json.Marshal(o.Structured)
		}
		if err != nil {
			return resolved{}, fmt.Errorf("the tool's structured output: %w", err)
		}
		res.structured = slices.Clip(json.RawMessage(b))
	}
	textOnly, texts := true, 0
	for i, p := range o.Parts {
		if err := checkResultPart(p); err != nil {
			return resolved{}, fmt.Errorf("the tool's output part %d: %w", i, err)
		}
		if _, ok := p.(TextPart); ok {
			texts++
		} else {
			textOnly = false
		}
	}
	res.content = joinText(o.Parts, texts)
	if texts == 0 && res.structured != nil {
		res.content = string(res.structured)
	}
	if !textOnly {
		res.parts = slices.Clone(o.Parts)
	}
	return res, nil
}

// joinText returns the text of parts' n text parts, joined.
func joinText(parts []Part, n int) string {
	if n == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if t, ok := p.(TextPart); ok {
			if n == 1 {
				return t.Text
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// withText returns parts with their text replaced by text (first, then
// the other parts in order): for a result whose Content a hook changed,
// so that the model sees the changed text, not the parts' (the adapters
// send Parts when there are any). nil stays nil.
func withText(parts []Part, text string) []Part {
	if parts == nil {
		return nil
	}
	out := make([]Part, 0, len(parts)+1)
	if text != "" {
		out = append(out, TextPart{Text: text})
	}
	for _, p := range parts {
		if _, ok := p.(TextPart); !ok {
			out = append(out, p)
		}
	}
	return out
}

// checkResultPart reports why p cannot be in a tool's result.
func checkResultPart(p Part) error {
	switch p := p.(type) {
	case TextPart:
		return nil
	case ImagePart, FilePart, AudioPart:
		url, mediaType, data := media(p)
		return checkMedia(p.partType(), url, mediaType, data)
	case nil:
		return fmt.Errorf("a nil part")
	}
	return fmt.Errorf("a %s part cannot be in a tool result (text, image, file or audio)", p.partType())
}

func checkMedia(kind, url, mediaType string, data []byte) error {
	switch {
	case url == "" && len(data) == 0:
		return fmt.Errorf("an %s with neither data nor a URL", kind)
	case url != "" && len(data) > 0:
		return fmt.Errorf("an %s with both data and a URL", kind)
	case len(data) > 0 && mediaType == "":
		return fmt.Errorf("an %s's data without a media type", kind)
	}
	return nil
}

// mediaBytes is the size a media part counts for against the output cap:
// its data, or its URL.
func mediaBytes(p Part) int {
	url, _, data := media(p)
	return len(data) + len(url)
}

// media returns an image's, a file's or audio's URL, media type and data;
// nothing for another part.
func media(p Part) (url, mediaType string, data []byte) {
	switch p := p.(type) {
	case ImagePart:
		return p.URL, p.MediaType, p.Data
	case FilePart:
		return p.URL, p.MediaType, p.Data
	case AudioPart:
		return p.URL, p.MediaType, p.Data
	}
	return "", "", nil
}

// capOutput fits res within max bytes, text and media together (max <= 0
// means no cap), or, when maxMedia is set, its media within maxMedia and
// the rest within max. Text is cut, with a marker, as a text result is;
// media and a structured value cannot be cut, so when they exceed the cap
// it returns an error message for the model instead.
func capOutput(res resolved, max, maxMedia int) (resolved, string) {
	fixed, counted := 0, res.parts // counted: the parts whose media count against max
	for _, p := range res.parts {
		fixed += mediaBytes(p)
	}
	if maxMedia > 0 {
		if fixed > maxMedia {
			return resolved{}, tooLarge(res.parts, nil, maxMedia)
		}
		fixed, counted = 0, nil
	}
	if max <= 0 {
		return res, ""
	}
	fixed += len(res.structured)
	if fixed > max {
		return resolved{}, tooLarge(counted, res.structured, max)
	}
	budget := max - fixed
	if res.structured != nil && res.content == string(res.structured) {
		return res, "" // the text is the structured value, counted once
	}
	if len(res.content) <= budget {
		return res, ""
	}
	if res.parts == nil { // text only
		res.content = truncate(res.content, budget)
		return res, ""
	}
	// Cut the text parts in order: the one that crosses the budget is
	// truncated with the marker, the ones after it are left out (the
	// marker counts their bytes too).
	total, left := len(res.content), budget
	parts := make([]Part, 0, len(res.parts))
	cut, n := false, 0
	for _, p := range res.parts {
		t, ok := p.(TextPart)
		if !ok {
			parts = append(parts, p)
			continue
		}
		switch {
		case cut:
			continue
		case len(t.Text) <= left:
			left -= len(t.Text)
		default:
			shown := budget - left + cutPoint(t.Text, left)
			t.Text = t.Text[:cutPoint(t.Text, left)] + fmt.Sprintf("\n[output truncated: showing %d of %d bytes of text]", shown, total)
			cut = true
		}
		parts = append(parts, t)
		n++
	}
	res.parts = parts
	res.content = joinText(parts, n)
	return res, ""
}

// cutPoint is the largest UTF-8 boundary of s at or below n.
func cutPoint(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return n
}

// mediaName is how a message names a media part: its media type, else
// "(by URL)" or "(no media type)".
func mediaName(p Part) string {
	url, mt, _ := media(p)
	if mt != "" {
		return mt
	}
	if url != "" {
		return "(by URL)"
	}
	return "(no media type)"
}

// tooLarge is the message for an output over the max-byte cap: the media
// of parts and the structured value, with their sizes. It is built only
// then, so that a result within the cap costs no formatting.
func tooLarge(parts []Part, structured json.RawMessage, max int) string {
	var what []string
	for _, p := range parts {
		if n := mediaBytes(p); n > 0 {
			what = append(what, fmt.Sprintf("%s %s of %d bytes", p.partType(), mediaName(p), n))
		}
	}
	if structured != nil {
		what = append(what, fmt.Sprintf("a structured value of %d bytes", len(structured)))
	}
	return fmt.Sprintf("Error: the tool's output is too large to send: %s, over the %d-byte limit on a tool's output. It cannot be cut without breaking it; return less (a smaller or compressed image, fewer pages).", strings.Join(what, ", "), max)
}

// MarshalJSON writes the result with its "type" discriminator, as in a
// Message, since a result also stands alone: in ToolFinished, a
// Checkpoint's Results and the workflow types of runlet/temporal.
func (p ToolResultPart) MarshalJSON() ([]byte, error) {
	type w ToolResultPart
	if p.Parts == nil && (len(p.Structured) == 0 || json.Valid(p.Structured)) {
		return tagged(p.partType(), w(p))
	}
	v := struct {
		w
		Parts          []json.RawMessage `json:"parts,omitempty"`
		Structured     json.RawMessage   `json:"structured,omitempty"`
		StructuredText *string           `json:"structured_text,omitempty"`
	}{w: w(p), Structured: p.Structured}
	if p.Parts != nil {
		v.Parts = make([]json.RawMessage, len(p.Parts))
		for i, q := range p.Parts {
			b, err := marshalPart(q)
			if err != nil {
				return nil, err
			}
			v.Parts[i] = b
		}
	}
	if len(p.Structured) > 0 && !json.Valid(p.Structured) {
		s := string(p.Structured)
		v.Structured, v.StructuredText = nil, &s
	}
	return tagged(p.partType(), v)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *ToolResultPart) UnmarshalJSON(data []byte) error {
	var w wirePart
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	r, err := w.toolResult()
	if err != nil {
		return err
	}
	*p = r
	return nil
}

// clone returns p with its own copies of its parts' slices.
func (p ToolResultPart) clone() ToolResultPart {
	p.Structured = slices.Clone(p.Structured)
	if p.Parts != nil {
		p.Parts = slices.Clone(p.Parts)
		for i, q := range p.Parts {
			p.Parts[i] = clonePart(q)
		}
	}
	return p
}

// toolResult reads a tool result; its parts may be only the kinds a
// result holds (see ToolResultPart).
func (w *wirePart) toolResult() (ToolResultPart, error) {
	r := ToolResultPart{CallID: w.CallID, Name: w.Name, Content: w.Content, IsError: w.IsError, Structured: w.Structured}
	if w.StructuredText != nil {
		r.Structured = json.RawMessage(*w.StructuredText)
	}
	if w.Parts != nil {
		r.Parts = make([]Part, len(w.Parts))
		for i := range w.Parts {
			if !resultPartType(w.Parts[i].Type) {
				return ToolResultPart{}, fmt.Errorf("tool result part %d: a %q part cannot be in a tool result", i, w.Parts[i].Type)
			}
			p, err := w.Parts[i].part()
			if err != nil {
				return ToolResultPart{}, fmt.Errorf("tool result part %d: %w", i, err)
			}
			r.Parts[i] = p
		}
	}
	return r, nil
}

// resultPartType reports whether a part of JSON type typ may be in a tool
// result's Parts.
func resultPartType(typ string) bool {
	switch typ {
	case "text", "image", "file", "audio":
		return true
	}
	return false
}
