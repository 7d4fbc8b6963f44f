package openai

// The conversation part of the Chat Completions request body (see
// chat_write.go): instructions, then each message as the wire wants it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/toolresult"
	"github.com/runlet/runlet/internal/wirejson"
)

// messages writes the instructions and history.
func (w *chatWriter) messages(req *runlet.ModelRequest, provider string, ctl *chatControl) error {
	if req.Instructions != "" {
		w.textMessage(ctl.instructionsRole, req.Instructions)
	}
	for i, msg := range req.Messages {
		if msg.Role != runlet.RoleTool {
			w.flushAttachments()
		}
		var err error
		switch msg.Role {
		case runlet.RoleUser:
			err = w.user(msg)
		case runlet.RoleAssistant:
			err = w.assistant(msg, provider, ctl.sendReasoning)
		case runlet.RoleTool:
			err = w.toolResults(msg)
		default:
			err = fmt.Errorf("unknown role %q", msg.Role)
		}
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
	}
	w.flushAttachments()
	if w.n == 0 {
		return fmt.Errorf("the request has no messages")
	}
	return nil
}

// open starts a message object.
func (w *chatWriter) open(role string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = append(w.b, `{"role":`...)
	w.b = wirejson.AppendString(w.b, role)
}

// textMessage writes a message whose content is a string.
func (w *chatWriter) textMessage(role, content string) {
	w.open(role)
	w.b = append(w.b, `,"content":`...)
	w.b = wirejson.AppendString(w.b, content)
	w.b = append(w.b, '}')
}

// toolMessage writes a tool message. A tool message takes text only (the
// API's tool message content parts are text): a result's images, files
// and audio wait in w.attach for the user message flushAttachments
// writes after the turn's last tool message, and the tool message's text
// says so.
func (w *chatWriter) toolMessage(p runlet.ToolResultPart) error {
	content := p.Content
	if toolresult.HasMedia(p) {
		label := "[The attachments of the tool result for call " + p.CallID + " follow in the next user message.]"
		w.attach = append(w.attach, chatContentPart{Type: "text", Text: "Attachments of the tool result for call " + p.CallID + ":"})
		for _, q := range p.Parts {
			cp, ok, err := chatMedia(q)
			if err != nil {
				return fmt.Errorf("tool result %q: %w", p.CallID, err)
			}
			if ok {
				w.attach = append(w.attach, cp)
			}
		}
		if content != "" {
			content += "\n\n"
		}
		content += label
	}
	w.open("tool")
	w.b = append(w.b, `,"content":`...)
	w.b = wirejson.AppendString(w.b, content)
	if p.CallID != "" {
		w.b = append(w.b, `,"tool_call_id":`...)
		w.b = wirejson.AppendString(w.b, p.CallID)
	}
	w.b = append(w.b, '}')
	return nil
}

// flushAttachments writes the tool results' attachments waiting in
// w.attach as one user message.
func (w *chatWriter) flushAttachments() {
	if len(w.attach) == 0 {
		return
	}
	w.open("user")
	w.b = append(w.b, `,"content":[`...)
	for i := range w.attach {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.contentPart(&w.attach[i])
	}
	w.b = append(w.b, "]}"...)
	w.attach = w.attach[:0]
}

// chatMedia is the user content part of an image, file or audio part; ok
// is false for any other part.
func chatMedia(p runlet.Part) (cp chatContentPart, ok bool, err error) {
	switch p := p.(type) {
	case runlet.ImagePart:
		u, err := chatImage(p)
		return chatContentPart{Type: "image_url", ImageURL: &chatImageURL{URL: u, Detail: p.Detail}}, true, err
	case runlet.FilePart:
		cp, err := chatFilePart(p)
		return cp, true, err
	case runlet.AudioPart:
		cp, err := chatAudioPart(p)
		return cp, true, err
	}
	return chatContentPart{}, false, nil
}

// user writes a user message: its tool results as tool messages, as they
// come, then the rest as one user message (a string when it is one text).
func (w *chatWriter) user(msg runlet.Message) error {
	var others []chatContentPart // images and files, in order
	texts := 0
	var text string
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			if p.Text != "" {
				texts++
				text = p.Text
			}
		case runlet.ImagePart:
			u, err := chatImage(p)
			if err != nil {
				return err
			}
			others = append(others, chatContentPart{Type: "image_url", ImageURL: &chatImageURL{URL: u, Detail: p.Detail}})
		case runlet.FilePart:
			cp, err := chatFilePart(p)
			if err != nil {
				return err
			}
			others = append(others, cp)
		case runlet.AudioPart:
			cp, err := chatAudioPart(p)
			if err != nil {
				return err
			}
			others = append(others, cp)
		case runlet.ToolResultPart:
			// Tool results belong in tool messages wherever they appear.
			if err := w.toolMessage(p); err != nil {
				return err
			}
		case runlet.ReasoningPart, runlet.ToolCallPart:
			return fmt.Errorf("a user message cannot hold a %T", p)
		}
	}
	w.flushAttachments()
	switch {
	case texts+len(others) == 0:
		// A message of tool results only needs no user message of its own.
		if len(msg.Parts) == 0 || !chatOnlyToolResults(msg) {
			w.textMessage("user", "")
		}
	case texts == 1 && len(others) == 0:
		w.textMessage("user", text)
	default:
		w.open("user")
		w.b = append(w.b, `,"content":[`...)
		k, first := 0, true
		for _, p := range msg.Parts {
			var cp chatContentPart
			switch p := p.(type) {
			case runlet.TextPart:
				if p.Text == "" {
					continue
				}
				cp = chatContentPart{Type: "text", Text: p.Text}
			case runlet.ImagePart, runlet.FilePart, runlet.AudioPart:
				cp = others[k]
				k++
			default:
				continue
			}
			if !first {
				w.b = append(w.b, ',')
			}
			first = false
			w.contentPart(&cp)
		}
		w.b = append(w.b, "]}"...)
	}
	return nil
}

func (w *chatWriter) contentPart(p *chatContentPart) {
	w.b = append(w.b, `{"type":`...)
	w.b = wirejson.AppendString(w.b, p.Type)
	if p.Text != "" {
		w.b = append(w.b, `,"text":`...)
		w.b = wirejson.AppendString(w.b, p.Text)
	}
	if u := p.ImageURL; u != nil {
		w.b = append(w.b, `,"image_url":{"url":`...)
		w.b = wirejson.AppendString(w.b, u.URL)
		if u.Detail != "" {
			w.b = append(w.b, `,"detail":`...)
			w.b = wirejson.AppendString(w.b, u.Detail)
		}
		w.b = append(w.b, '}')
	}
	if a := p.InputAudio; a != nil {
		w.b = append(w.b, `,"input_audio":{"data":`...)
		w.b = wirejson.AppendString(w.b, a.Data)
		w.b = append(w.b, `,"format":`...)
		w.b = wirejson.AppendString(w.b, a.Format)
		w.b = append(w.b, '}')
	}
	if f := p.File; f != nil {
		w.b = append(w.b, `,"file":{`...)
		if f.Filename != "" {
			w.b = append(w.b, `"filename":`...)
			w.b = wirejson.AppendString(w.b, f.Filename)
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, `"file_data":`...)
		w.b = wirejson.AppendString(w.b, f.FileData)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, '}')
}

// assistant writes an assistant message: its text as content, its tool
// calls, and reasoning as the server wants it (see the ChatCompletions
// doc).
func (w *chatWriter) assistant(msg runlet.Message, provider, reasoningField string) error {
	msg.Parts = chatHostedAsText(msg.Parts)
	calls, texts, textValid := 0, 0, true
	var reasoning strings.Builder
	var details []string
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			if p.Text != "" {
				texts++
				textValid = textValid && utf8.ValidString(p.Text)
			}
		case runlet.ReasoningPart:
			// Only this provider's reasoning, and only to servers that want it.
			if reasoningField != "" && p.Provider == provider {
				reasoning.WriteString(p.Text)
			}
			// reasoning_details goes back to the server that sent it
			// whatever SendReasoning says: it asks for it unchanged.
			if p.Provider == provider && strings.HasPrefix(p.Details, "[") && json.Valid([]byte(p.Details)) {
				details = append(details, p.Details)
			}
		case runlet.ToolCallPart:
			calls++
		case runlet.ToolResultPart:
			return fmt.Errorf("an assistant message cannot hold a tool result")
		default:
			return fmt.Errorf("the Chat Completions API takes no %T in an assistant message", p)
		}
	}
	w.open("assistant")
	if texts > 0 || calls == 0 {
		w.b = append(w.b, `,"content":`...)
		w.b = appendJoinedText(w.b, msg.Parts, texts, textValid)
	}
	if calls > 0 {
		w.b = append(w.b, `,"tool_calls":[`...)
		first := true
		for _, p := range msg.Parts {
			p, ok := p.(runlet.ToolCallPart)
			if !ok {
				continue
			}
			if !first {
				w.b = append(w.b, ',')
			}
			first = false
			w.b = append(w.b, `{"id":`...)
			w.b = wirejson.AppendString(w.b, p.ID)
			w.b = append(w.b, `,"type":"function","function":{"name":`...)
			w.b = wirejson.AppendString(w.b, p.Name)
			w.b = append(w.b, `,"arguments":`...)
			if len(bytes.TrimSpace(p.Arguments)) == 0 {
				w.b = append(w.b, `"{}"`...)
			} else {
				w.b = wirejson.AppendString(w.b, p.Arguments)
			}
			w.b = append(w.b, '}')
			if p.Signature != "" && p.Provider == provider {
				// Sent back unchanged, on the call, only to the server that
				// signed it; a call a person edited on approval is no longer
				// the one signed: it gets Gemini's documented placeholder.
				sig := p.Signature
				if len(p.OriginalArguments) > 0 {
					sig = chatSkipThoughtSignature
				}
				w.b = append(w.b, `,"extra_content":{"google":{"thought_signature":`...)
				w.b = wirejson.AppendString(w.b, sig)
				w.b = append(w.b, "}}"...)
			}
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	switch reasoningField {
	case "reasoning_content":
		// DeepSeek's thinking mode answers 400 unless every assistant
		// message with tool calls carries reasoning_content, even empty.
		if reasoning.Len() > 0 || calls > 0 {
			w.b = append(w.b, `,"reasoning_content":`...)
			w.b = wirejson.AppendString(w.b, reasoning.String())
		}
	case "reasoning":
		if reasoning.Len() > 0 {
			w.b = append(w.b, `,"reasoning":`...)
			w.b = wirejson.AppendString(w.b, reasoning.String())
		}
	}
	if d := chatJoinDetails(details); len(d) > 0 {
		w.b = append(w.b, `,"reasoning_details":`...)
		var err error
		if w.b, err = wirejson.AppendRaw(w.b, d); err != nil {
			return err
		}
	}
	w.b = append(w.b, '}')
	return nil
}

// appendJoinedText appends the text parts among parts joined, as one JSON
// string; texts counts them and valid says whether all are valid UTF-8.
func appendJoinedText(dst []byte, parts []runlet.Part, texts int, valid bool) []byte {
	if !valid && texts > 1 {
		// Invalid UTF-8 is replaced after joining: a character may be
		// split between two parts.
		var b strings.Builder
		for _, p := range parts {
			if t, ok := p.(runlet.TextPart); ok {
				b.WriteString(t.Text)
			}
		}
		return wirejson.AppendString(dst, b.String())
	}
	dst = append(dst, '"')
	for _, p := range parts {
		if t, ok := p.(runlet.TextPart); ok {
			dst = wirejson.AppendEscaped(dst, t.Text)
		}
	}
	return append(dst, '"')
}

func (w *chatWriter) toolResults(msg runlet.Message) error {
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.ToolResultPart:
			if err := w.toolMessage(p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("a tool message can only hold tool results, not a %T", p)
		}
	}
	return nil
}

// chatSkipThoughtSignature is the placeholder Gemini documents for a
// function call it did not generate as sent: here, one a person edited.
const chatSkipThoughtSignature = "skip_thought_signature_validator"
