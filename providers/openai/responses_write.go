package openai

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
	"github.com/runlet/runlet/internal/wirejson"
)

// The Responses request body written directly, as chat_write.go writes
// the Chat Completions one: the same bytes wirejson.Marshal writes for
// respRequest and the items translateMessages builds, without building
// them. Requests whose options reshape the body (pass-through keys, the
// "text" and "tools" options) still go through the structs.

// respWriter writes one body.
type respWriter struct {
	m     *Responses
	b     []byte
	items int // input items written
}

// write returns the body for w's settings (its Input, Tools, ToolChoice and
// Text unset), the messages msgs and the tools of req.
func (m *Responses) write(w *respRequest, req *runlet.ModelRequest, msgs []runlet.Message, strict bool) ([]byte, error) {
	buf := getScratch()
	rw := respWriter{m: m, b: *buf}
	body, err := rw.request(w, req, msgs, strict)
	return putScratch(buf, rw.b, body, err)
}

func (rw *respWriter) request(w *respRequest, req *runlet.ModelRequest, msgs []runlet.Message, strict bool) ([]byte, error) {
	m := rw.m
	rw.b = append(rw.b, `{"model":`...)
	rw.b = wirejson.AppendString(rw.b, w.Model)
	if w.Instructions != "" {
		rw.b = append(rw.b, `,"instructions":`...)
		rw.b = wirejson.AppendString(rw.b, w.Instructions)
	}
	if w.PreviousResponseID != "" {
		rw.b = append(rw.b, `,"previous_response_id":`...)
		rw.b = wirejson.AppendString(rw.b, w.PreviousResponseID)
	}
	rw.b = append(rw.b, `,"input":[`...)
	for i, msg := range msgs {
		var err error
		if msg.Role == runlet.RoleAssistant {
			err = rw.assistant(msg, w.Store)
		} else {
			err = rw.input(msg)
		}
		if err != nil {
			return nil, m.invalid(fmt.Sprintf("message %d", i), err)
		}
	}
	rw.b = append(rw.b, ']')
	if len(req.Tools) > 0 {
		rw.b = append(rw.b, `,"tools":[`...)
		for i, t := range req.Tools {
			if t.Name == "" {
				return nil, m.invalid(fmt.Sprintf("tool %d has no name", i), nil)
			}
			if i > 0 {
				rw.b = append(rw.b, ',')
			}
			rw.b = append(rw.b, `{"type":"function",`...)
			var err error
			if rw.b, err = appendFunction(rw.b, &req.Tools[i]); err != nil {
				return nil, m.invalid(fmt.Sprintf("tool %q schema", t.Name), err)
			}
			rw.b = append(rw.b, `,"strict":`...)
			rw.b = strconv.AppendBool(rw.b, strict)
			rw.b = append(rw.b, '}')
		}
		rw.b = append(rw.b, ']')
	}
	if _, err := toolChoice(req.ToolChoice, func(string) any { return nil }); err != nil {
		return nil, m.invalid("invalid tool choice", err)
	}
	switch mode := req.ToolChoice.Mode; mode {
	case "":
	case runlet.ToolChoiceTool:
		// encoding/json writes a map's keys sorted.
		rw.b = append(rw.b, `,"tool_choice":{"name":`...)
		rw.b = wirejson.AppendString(rw.b, req.ToolChoice.Name)
		rw.b = append(rw.b, `,"type":"function"}`...)
	default:
		rw.b = append(rw.b, `,"tool_choice":`...)
		rw.b = wirejson.AppendString(rw.b, string(mode))
	}
	if sch := req.OutputSchema; sch != nil && sch.Schema != nil {
		name, raw, strict, err := outputFormat(sch)
		if err != nil {
			return nil, m.invalid("output schema", err)
		}
		// {"format": {...}}, the map's keys sorted.
		rw.b = append(rw.b, `,"text":{"format":{`...)
		if sch.Description != "" {
			rw.b = append(rw.b, `"description":`...)
			rw.b = wirejson.AppendString(rw.b, sch.Description)
			rw.b = append(rw.b, ',')
		}
		rw.b = append(rw.b, `"name":`...)
		rw.b = wirejson.AppendString(rw.b, name)
		rw.b = append(rw.b, `,"schema":`...)
		if rw.b, err = wirejson.AppendRaw(rw.b, raw); err != nil { // nil: null
			return nil, m.invalid("output schema", err)
		}
		rw.b = append(rw.b, `,"strict":`...)
		rw.b = strconv.AppendBool(rw.b, strict)
		rw.b = append(rw.b, `,"type":"json_schema"}}`...)
	}
	if w.MaxOutputTokens != 0 {
		rw.b = append(rw.b, `,"max_output_tokens":`...)
		rw.b = strconv.AppendInt(rw.b, int64(w.MaxOutputTokens), 10)
	}
	for _, f := range [...]struct {
		key string
		v   *float64
	}{{`,"temperature":`, w.Temperature}, {`,"top_p":`, w.TopP}} {
		if f.v == nil {
			continue
		}
		rw.b = append(rw.b, f.key...)
		var err error
		if rw.b, err = wirejson.AppendFloat(rw.b, *f.v); err != nil {
			return nil, m.invalid("encoding request", err)
		}
	}
	if r := w.Reasoning; r != (respReasoningConfig{}) {
		rw.b = append(rw.b, `,"reasoning":{`...)
		if r.Effort != "" {
			rw.b = append(rw.b, `"effort":`...)
			rw.b = wirejson.AppendString(rw.b, r.Effort)
			if r.Summary != "" {
				rw.b = append(rw.b, ',')
			}
		}
		if r.Summary != "" {
			rw.b = append(rw.b, `"summary":`...)
			rw.b = wirejson.AppendString(rw.b, r.Summary)
		}
		rw.b = append(rw.b, '}')
	}
	rw.b = append(rw.b, `,"store":`...)
	rw.b = strconv.AppendBool(rw.b, w.Store)
	if len(w.Include) > 0 {
		rw.b = append(rw.b, `,"include":[`...)
		for i, s := range w.Include {
			if i > 0 {
				rw.b = append(rw.b, ',')
			}
			rw.b = wirejson.AppendString(rw.b, s)
		}
		rw.b = append(rw.b, ']')
	}
	if w.Stream {
		rw.b = append(rw.b, `,"stream":true`...)
	}
	return append(rw.b, '}'), nil
}

// item starts an input item.
func (rw *respWriter) item() {
	if rw.items > 0 {
		rw.b = append(rw.b, ',')
	}
	rw.items++
}

// input writes a user or tool message: text, images and files as one input
// message (a plain string when it is only text) per run between tool
// results, which become function_call_output items.
func (rw *respWriter) input(msg runlet.Message) error {
	role := "user"
	if msg.Role != runlet.RoleUser && msg.Role != runlet.RoleTool {
		role = string(msg.Role) // "system", "developer": passed as given
	}
	start, n := 0, 0 // the run of content parts to write: from start, n of them
	for i, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.TextPart, runlet.ImagePart, runlet.FilePart:
			if n == 0 {
				start = i
			}
			n++
		case runlet.AudioPart:
			_, err := respContent(p)
			return err
		case runlet.ToolResultPart:
			if err := rw.content(role, msg.Parts[start:i], n); err != nil {
				return err
			}
			n = 0
			if p.CallID == "" {
				return fmt.Errorf("tool result has no call ID")
			}
			rw.item()
			rw.b = append(rw.b, `{"type":"function_call_output","call_id":`...)
			rw.b = wirejson.AppendString(rw.b, p.CallID)
			rw.b = append(rw.b, `,"output":`...)
			if p.Parts == nil {
				rw.b = wirejson.AppendString(rw.b, p.Content)
			} else { // content items: rare, so encoded as the other path does
				out, err := respToolOutput(p)
				if err != nil {
					return err
				}
				raw, err := wirejson.Marshal(out)
				if err != nil {
					return err
				}
				rw.b = append(rw.b, raw...)
			}
			rw.b = append(rw.b, '}')
		}
		// Reasoning and tool calls outside assistant messages have no input form.
	}
	return rw.content(role, msg.Parts[start:], n)
}

// content writes the n content parts among parts as one input message.
func (rw *respWriter) content(role string, parts []runlet.Part, n int) error {
	if n == 0 {
		return nil
	}
	mark, items := len(rw.b), rw.items
	rw.item()
	rw.b = append(rw.b, `{"type":"message","role":`...)
	rw.b = wirejson.AppendString(rw.b, role)
	rw.b = append(rw.b, `,"content":`...)
	if n == 1 {
		for _, p := range parts {
			if t, ok := p.(runlet.TextPart); ok {
				rw.b = wirejson.AppendString(rw.b, t.Text)
				rw.b = append(rw.b, '}')
				return nil
			}
		}
	}
	rw.b = append(rw.b, '[')
	first := true
	for _, p := range parts {
		switch p.(type) {
		case runlet.TextPart, runlet.ImagePart, runlet.FilePart:
		default:
			continue
		}
		if !first {
			rw.b = append(rw.b, ',')
		}
		first = false
		switch p := p.(type) {
		case runlet.TextPart:
			rw.b = append(rw.b, `{"type":"input_text","text":`...)
			rw.b = wirejson.AppendString(rw.b, p.Text)
		case runlet.ImagePart:
			u := p.URL
			if len(p.Data) > 0 {
				u = dataurl.Encode(p.MediaType, p.Data)
			}
			if u == "" {
				rw.b, rw.items = rw.b[:mark], items
				return fmt.Errorf("image part has neither URL nor data")
			}
			detail := p.Detail
			if detail == "" {
				detail = "auto"
			}
			rw.b = append(rw.b, `{"type":"input_image","image_url":`...)
			rw.b = wirejson.AppendString(rw.b, u)
			rw.b = append(rw.b, `,"detail":`...)
			rw.b = wirejson.AppendString(rw.b, detail)
		case runlet.FilePart:
			name := p.Name
			if mt, d, ok := dataurl.Inline(p.URL, p.MediaType, p.Data); ok {
				p.MediaType, p.Data = mt, d // a data: URL goes as file_data, not file_url
			}
			var data, url string
			switch {
			case len(p.Data) > 0:
				data = dataurl.Encode(p.MediaType, p.Data)
				if name == "" {
					name = "file"
				}
			case p.URL != "":
				url = p.URL
			default:
				rw.b, rw.items = rw.b[:mark], items
				return fmt.Errorf("file part has neither URL nor data")
			}
			rw.b = append(rw.b, `{"type":"input_file"`...)
			if name != "" {
				rw.b = append(rw.b, `,"filename":`...)
				rw.b = wirejson.AppendString(rw.b, name)
			}
			if data != "" {
				rw.b = append(rw.b, `,"file_data":`...)
				rw.b = wirejson.AppendString(rw.b, data)
			}
			if url != "" {
				rw.b = append(rw.b, `,"file_url":`...)
				rw.b = wirejson.AppendString(rw.b, url)
			}
		}
		rw.b = append(rw.b, '}')
	}
	rw.b = append(rw.b, "]}"...)
	return nil
}

// assistant writes an assistant message as appendAssistant translates it.
func (rw *respWriter) assistant(msg runlet.Message, store bool) error {
	m := rw.m
	parts := msg.Parts
	keep := m.replayedReasoning(parts, store)

	textStart, texts, textLen, textValid := 0, 0, 0, true // the text parts not yet written
	flush := func(end int) {
		if textLen > 0 {
			rw.assistantText(parts[textStart:end], texts, textValid)
		}
		texts, textLen, textValid = 0, 0, true
	}
	paired := false // the nearest reasoning part before this point was sent
	for i, p := range parts {
		switch p := p.(type) {
		case runlet.TextPart:
			if paired && p.Provider == m.r.name && p.ItemID != "" {
				// The message that followed a replayed reasoning item goes
				// back as that output item, with its ID, so they pair.
				flush(i)
				rw.item()
				rw.b = append(rw.b, `{"type":"message","role":"assistant","id":`...)
				rw.b = wirejson.AppendString(rw.b, p.ItemID)
				rw.b = append(rw.b, `,"status":"completed","content":[{"type":"output_text","text":`...)
				rw.b = wirejson.AppendString(rw.b, p.Text)
				rw.b = append(rw.b, `,"annotations":[],"logprobs":[]}]}`...)
				paired = false
				continue
			}
			if texts == 0 {
				textStart = i
			}
			texts++
			textLen += len(p.Text)
			textValid = textValid && utf8.ValidString(p.Text)
		case runlet.ReasoningPart:
			if p.Provider != m.r.name {
				continue // foreign continuation state: never sent
			}
			paired = keep != nil && keep[i]
			if !paired {
				continue
			}
			flush(i)
			rw.item()
			rw.b = append(rw.b, `{"type":"reasoning","id":`...)
			rw.b = wirejson.AppendString(rw.b, p.ID)
			rw.b = append(rw.b, `,"summary":[`...)
			if p.Text != "" {
				rw.b = append(rw.b, `{"type":"summary_text","text":`...)
				rw.b = wirejson.AppendString(rw.b, p.Text)
				rw.b = append(rw.b, '}')
			}
			rw.b = append(rw.b, ']')
			if p.Encrypted != "" {
				rw.b = append(rw.b, `,"encrypted_content":`...)
				rw.b = wirejson.AppendString(rw.b, p.Encrypted)
			}
			rw.b = append(rw.b, '}')
		case runlet.ToolCallPart:
			flush(i)
			if p.ID == "" || p.Name == "" {
				return fmt.Errorf("tool call without ID or name")
			}
			rw.item()
			rw.b = append(rw.b, `{"type":"function_call"`...)
			if paired && p.Provider == m.r.name && p.ItemID != "" {
				rw.b = append(rw.b, `,"id":`...)
				rw.b = wirejson.AppendString(rw.b, p.ItemID)
			}
			rw.b = append(rw.b, `,"call_id":`...)
			rw.b = wirejson.AppendString(rw.b, p.ID)
			rw.b = append(rw.b, `,"name":`...)
			rw.b = wirejson.AppendString(rw.b, p.Name)
			rw.b = append(rw.b, `,"arguments":`...)
			if len(p.Arguments) == 0 {
				rw.b = append(rw.b, `"{}"`...)
			} else {
				rw.b = wirejson.AppendString(rw.b, p.Arguments)
			}
			rw.b = append(rw.b, '}')
		}
	}
	flush(len(parts))
	return nil
}

// assistantText writes the text parts among parts, joined, as one
// assistant input message.
func (rw *respWriter) assistantText(parts []runlet.Part, texts int, valid bool) {
	rw.item()
	rw.b = append(rw.b, `{"type":"message","role":"assistant","content":`...)
	rw.b = appendJoinedText(rw.b, parts, texts, valid)
	rw.b = append(rw.b, '}')
}
