package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// The request body is written directly into one buffer, field by field in
// the order encoding/json would write a GenerateContentRequest struct, so
// it is byte for byte what marshalling the wire types gives
// (TestEncodeMatchesMarshal and FuzzEncodeRequest compare the two) without
// building them: no per-part values, maps or slices, one allocation for
// the body in the usual case.

// encodeRequest writes the body of req for model, with the generation
// config gen and the generationConfig option's keys set on it.
func (m *Model) encodeRequest(req *runlet.ModelRequest, model string, gen *wireGenerationConfig, genOverlay map[string]any) ([]byte, error) {
	b := make([]byte, 0, requestSize(req))
	b = append(b, `{"contents":`...)
	b, err := m.appendContents(b, req.Messages, model)
	if err != nil {
		return nil, m.invalid("", err)
	}
	if req.Instructions != "" {
		b = append(b, `,"systemInstruction":{"parts":[{"text":`...)
		b = wirejson.AppendString(b, req.Instructions)
		b = append(b, "}]}"...)
	}
	toolsAt := len(b)
	b = append(b, `,"tools":[`...)
	if len(req.Tools) > 0 {
		b = append(b, `{"functionDeclarations":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = wirejson.AppendString(b, t.Name)
			if t.Description != "" {
				b = append(b, `,"description":`...)
				b = wirejson.AppendString(b, t.Description)
			}
			if t.InputSchema != nil {
				raw, err := schemajson.Marshal(t.InputSchema) // cached: tools go out every turn
				if err != nil {
					return nil, m.invalid(fmt.Sprintf("tool %q: input schema", t.Name), err)
				}
				if len(raw) > 0 {
					b = append(b, `,"parametersJsonSchema":`...)
					if b, err = wirejson.AppendRaw(b, raw); err != nil {
						return nil, m.invalid("encoding request", err)
					}
				}
			}
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b, none, err := m.appendHostedTools(b, req.HostedTools, len(req.Tools) == 0)
	if err != nil {
		return nil, m.invalid("hosted tools", err)
	}
	if none {
		b = b[:toolsAt] // no tools: no "tools" key
	} else {
		b = append(b, ']')
	}
	if len(req.Tools) > 0 {
		b = appendToolConfig(b, req.ToolChoice)
	}
	if !gen.empty() || len(genOverlay) > 0 {
		raw, err := wirejson.Marshal(*gen) // a copy: gen stays on the caller's stack
		if err != nil {
			return nil, m.invalid("encoding request", err)
		}
		if len(genOverlay) > 0 {
			if raw, err = wirejson.Overlay(raw, genOverlay); err != nil {
				return nil, m.invalid("encoding option \"generationConfig\"", err)
			}
		}
		if string(raw) != "{}" {
			b = append(b, `,"generationConfig":`...)
			if b, err = wirejson.AppendRaw(b, raw); err != nil {
				return nil, m.invalid("encoding request", err)
			}
		}
	}
	return append(b, '}'), nil
}

// empty reports whether g encodes as {}.
func (g *wireGenerationConfig) empty() bool {
	return g.Temperature == nil && g.TopP == nil && g.MaxOutputTokens == 0 && len(g.StopSequences) == 0 &&
		g.ResponseMimeType == "" && len(g.ResponseJSONSchema) == 0 && len(g.ThinkingConfig) == 0
}

// requestSize is a guess at the body's length, a little over for the
// usual request, so that the body is allocated once.
func requestSize(req *runlet.ModelRequest) int {
	n := 128 + len(req.Instructions)
	for _, msg := range req.Messages {
		for _, p := range msg.Parts {
			n += 48
			switch p := p.(type) {
			case runlet.TextPart:
				n += len(p.Text) + len(p.Signature)
			case runlet.ReasoningPart:
				n += len(p.Text) + len(p.Signature)
			case runlet.ToolCallPart:
				n += len(p.ID) + len(p.Name) + len(p.Arguments) + len(p.Signature) + len(skipSignature)
			case runlet.ToolResultPart:
				n += len(p.CallID) + len(p.Name) + len(p.Content) + 32
			case runlet.ImagePart:
				n += len(p.URL) + len(p.MediaType) + len(p.Data)*4/3 + 4
			case runlet.FilePart:
				n += len(p.URL) + len(p.MediaType) + len(p.Data)*4/3 + 4
			}
		}
	}
	for _, t := range req.Tools {
		n += 64 + len(t.Name) + len(t.Description)
		if t.InputSchema != nil {
			if raw, err := schemajson.Marshal(t.InputSchema); err == nil {
				n += len(raw)
			}
		}
	}
	return n
}

// appendToolConfig writes the functionCallingConfig of a tool choice;
// nothing for the provider default.
func appendToolConfig(b []byte, tc runlet.ToolChoice) []byte {
	var mode string
	switch tc.Mode {
	case runlet.ToolChoiceAuto:
		mode = "AUTO"
	case runlet.ToolChoiceNone:
		mode = "NONE"
	case runlet.ToolChoiceRequired, runlet.ToolChoiceTool:
		mode = "ANY"
	default:
		return b
	}
	b = append(b, `,"toolConfig":{"functionCallingConfig":{"mode":"`...)
	b = append(b, mode...)
	b = append(b, '"')
	if tc.Mode == runlet.ToolChoiceTool {
		b = append(b, `,"allowedFunctionNames":[`...)
		b = wirejson.AppendString(b, tc.Name)
		b = append(b, ']')
	}
	return append(b, "}}"...)
}

// appendContents writes runlet messages as Gemini contents: assistant
// messages become "model" contents, user and tool messages "user" ones,
// and consecutive messages with the same role are merged. Messages left
// without parts are dropped.
func (m *Model) appendContents(b []byte, msgs []runlet.Message, model string) ([]byte, error) {
	b = append(b, '[')
	open := "" // the role of the content being written
	first := false
	skipSig := needsSkipSignature(model)
	// media of tool results sent as parts of their own, after the
	// content's other parts (see resultMedia)
	var after []wirePart
	flushAfter := func() {
		for _, mp := range after {
			b = append(b, ',')
			b = appendMedia(b, mp)
		}
		after = after[:0]
	}
	for i, msg := range msgs {
		role := "user"
		if msg.Role == runlet.RoleAssistant {
			role = "model"
		}
		signed := role != "model" || !skipSig // the message's first call is done
		for j, p := range msg.Parts {
			var mp wirePart
			var hosted []json.RawMessage // a HostedToolPart's parts; nil: its text
			switch p := p.(type) {
			case runlet.TextPart:
				if p.Text == "" && (!m.own(p.Provider) || p.Signature == "") {
					continue
				}
			case runlet.ReasoningPart:
				// Gemini reads nothing from unsigned thought text, and
				// another provider's reasoning means nothing to it.
				if !m.own(p.Provider) || p.Signature == "" {
					continue
				}
			case runlet.ToolCallPart, runlet.ToolResultPart:
			case runlet.HostedToolPart:
				// This adapter's code execution parts go back as received;
				// its grounding has none; another provider's part goes as
				// text.
				if items, ok := m.hostedParts(p); ok {
					if len(items) == 0 {
						continue
					}
					hosted = items
				} else {
					hosted = nil
				}
			case runlet.ImagePart:
				var err error
				if mp, err = media(p.URL, p.MediaType, p.Data); err != nil {
					return nil, fmt.Errorf("message %d: image part: %w", i, err)
				}
			case runlet.FilePart:
				var err error
				if mp, err = media(p.URL, p.MediaType, p.Data); err != nil {
					return nil, fmt.Errorf("message %d: file part %q: %w", i, p.Name, err)
				}
			case runlet.AudioPart:
				var err error
				if mp, err = media(p.URL, p.MediaType, p.Data); err != nil {
					return nil, fmt.Errorf("message %d: audio part: %w", i, err)
				}
			default:
				continue // nothing Gemini takes
			}
			switch {
			case open != role:
				if open != "" {
					flushAfter()
					b = append(b, "]},"...)
				}
				b = append(b, `{"role":"`...)
				b = append(b, role...)
				b = append(b, `","parts":[`...)
				open, first = role, true
			case !first:
				b = append(b, ',')
			}
			first = false
			switch p := p.(type) {
			case runlet.TextPart:
				b = append(b, `{"text":`...)
				b = wirejson.AppendString(b, p.Text)
				if m.own(p.Provider) && p.Signature != "" {
					b = append(b, `,"thoughtSignature":`...)
					b = wirejson.AppendString(b, p.Signature)
				}
				b = append(b, '}')
			case runlet.ReasoningPart:
				b = append(b, `{"text":`...)
				b = wirejson.AppendString(b, p.Text)
				b = append(b, `,"thought":true,"thoughtSignature":`...)
				b = wirejson.AppendString(b, p.Signature)
				b = append(b, '}')
			case runlet.ToolCallPart:
				sig := ""
				if m.own(p.Provider) && len(p.OriginalArguments) == 0 {
					// A call a person edited on approval is no longer the
					// model's: it goes without its signature (as the first
					// call, with the placeholder below).
					sig = p.Signature
				}
				if !signed {
					// Gemini signs the first call of each step and rejects
					// a turn whose first call lost its signature: send the
					// documented placeholder.
					if sig == "" {
						sig = skipSignature
					}
					signed = true
				}
				b = append(b, '{')
				if sig != "" {
					b = append(b, `"thoughtSignature":`...)
					b = wirejson.AppendString(b, sig)
					b = append(b, ',')
				}
				b = append(b, `"functionCall":{`...)
				if p.ID != "" {
					b = append(b, `"id":`...)
					b = wirejson.AppendString(b, p.ID)
					b = append(b, ',')
				}
				b = append(b, `"name":`...)
				b = wirejson.AppendString(b, p.Name)
				b = append(b, `,"args":`...)
				var err error
				if b, err = wirejson.AppendRaw(b, wirejson.Object(p.Arguments)); err != nil {
					return nil, err
				}
				b = append(b, "}}"...)
			case runlet.ToolResultPart:
				name := p.Name
				if name == "" {
					name = callName(msgs, i, j, p.CallID)
				}
				b = append(b, `{"functionResponse":{`...)
				if p.CallID != "" {
					b = append(b, `"id":`...)
					b = wirejson.AppendString(b, p.CallID)
					b = append(b, ',')
				}
				b = append(b, `"name":`...)
				b = wirejson.AppendString(b, name)
				if p.IsError {
					b = append(b, `,"response":{"error":`...)
				} else {
					b = append(b, `,"response":{"output":`...)
				}
				b = wirejson.AppendString(b, p.Content)
				b = append(b, '}')
				nested, siblings, err := resultMedia(p, skipSig)
				if err != nil {
					return nil, fmt.Errorf("message %d: tool result %q: %w", i, p.CallID, err)
				}
				if len(nested) > 0 {
					b = append(b, `,"parts":[`...)
					for k, mp := range nested {
						if k > 0 {
							b = append(b, ',')
						}
						b = appendMedia(b, mp)
					}
					b = append(b, ']')
				}
				b = append(b, "}}"...)
				after = append(after, siblings...)
			case runlet.HostedToolPart:
				if hosted == nil {
					b = append(b, `{"text":`...)
					b = wirejson.AppendString(b, p.Text())
					b = append(b, '}')
					break
				}
				for k, it := range hosted {
					if k > 0 {
						b = append(b, ',')
					}
					b = append(b, it...) // checked: see hostedParts
				}
			default:
				b = appendMedia(b, mp)
			}
		}
	}
	if open != "" {
		flushAfter()
		b = append(b, "]}"...)
	}
	return append(b, ']'), nil
}

// resultMedia splits a tool result's images, files and audio into those
// sent inside its functionResponse ("parts" of inlineData: Gemini 3's
// multimodal function responses, when multimodal is set) and those sent
// as parts of their own after the content's function responses (the
// fallback for earlier models, for media by URL, which a function
// response part cannot carry in the Gemini API, and for audio). The
// result's text stays in response.output (or error).
func resultMedia(p runlet.ToolResultPart, multimodal bool) (nested, siblings []wirePart, err error) {
	for _, q := range p.Parts {
		var mp wirePart
		audio := false
		switch q := q.(type) {
		case runlet.ImagePart:
			mp, err = media(q.URL, q.MediaType, q.Data)
		case runlet.FilePart:
			mp, err = media(q.URL, q.MediaType, q.Data)
		case runlet.AudioPart:
			mp, err = media(q.URL, q.MediaType, q.Data)
			audio = true
		default:
			continue // text: in response.output
		}
		if err != nil {
			return nil, nil, err
		}
		if multimodal && !audio && mp.InlineData != nil {
			nested = append(nested, mp)
		} else {
			siblings = append(siblings, mp)
		}
	}
	return nested, siblings, nil
}

// own reports whether continuation state made by provider is this
// adapter's to send back.
func (m *Model) own(provider string) bool { return provider == m.cfg.name }

// callName is the name of the tool call id answered by the tool result at
// msgs[i].Parts[j]: that of the latest call with that ID before it.
func callName(msgs []runlet.Message, i, j int, id string) string {
	for ; i >= 0; i-- {
		parts := msgs[i].Parts
		if j < 0 {
			j = len(parts)
		}
		for j--; j >= 0; j-- {
			if c, ok := parts[j].(runlet.ToolCallPart); ok && c.ID == id {
				return c.Name
			}
		}
	}
	return ""
}

// appendMedia writes an inlineData or fileData part built by media.
func appendMedia(b []byte, p wirePart) []byte {
	if d := p.InlineData; d != nil {
		b = append(b, `{"inlineData":{"mimeType":`...)
		b = wirejson.AppendString(b, d.MimeType)
		b = append(b, `,"data":"`...)
		b = append(b, d.Data...) // base64: nothing to escape
		return append(b, `"}}`...)
	}
	f := p.FileData
	b = append(b, `{"fileData":{`...)
	if f.MimeType != "" {
		b = append(b, `"mimeType":`...)
		b = wirejson.AppendString(b, f.MimeType)
		b = append(b, ',')
	}
	b = append(b, `"fileUri":`...)
	b = wirejson.AppendString(b, f.FileURI)
	return append(b, "}}"...)
}
