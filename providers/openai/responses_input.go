package openai

import (
	"fmt"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
	"github.com/runlet/runlet/internal/toolresult"
)

// respAfterLastAssistant returns the index of the first message after the
// last assistant message (0 when there is none).
func respAfterLastAssistant(msgs []runlet.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == runlet.RoleAssistant {
			return i + 1
		}
	}
	return 0
}

// respEditedLast reports whether the last assistant message of msgs has a
// call whose arguments a person edited on approval
// (runlet.ToolCallPart.OriginalArguments).
func respEditedLast(msgs []runlet.Message) bool {
	n := respAfterLastAssistant(msgs)
	if n == 0 {
		return false
	}
	for _, p := range msgs[n-1].Parts {
		if c, ok := p.(runlet.ToolCallPart); ok && len(c.OriginalArguments) > 0 {
			return true
		}
	}
	return false
}

// translateMessages converts runlet messages to input items, in order.
// store says whether OpenAI keeps items, so reasoning can be referenced by ID
// alone.
func (m *Responses) translateMessages(msgs []runlet.Message, store bool) ([]any, error) {
	items := make([]any, 0, len(msgs)+2)
	for i, msg := range msgs {
		var err error
		if msg.Role == runlet.RoleAssistant {
			items, err = m.appendAssistant(items, msg, store)
		} else {
			items, err = m.appendInput(items, msg)
		}
		if err != nil {
			return nil, m.invalid(fmt.Sprintf("message %d", i), err)
		}
	}
	return items, nil
}

// appendInput translates a user or tool message: text, images and files
// become one input message (a plain string when it is only text), tool
// results become function_call_output items.
func (m *Responses) appendInput(items []any, msg runlet.Message) ([]any, error) {
	role := "user"
	if msg.Role != runlet.RoleUser && msg.Role != runlet.RoleTool {
		role = string(msg.Role) // "system", "developer": passed as given
	}
	var content []any
	flush := func() {
		if len(content) == 0 {
			return
		}
		var c any = content
		if len(content) == 1 {
			if t, ok := content[0].(respInputText); ok {
				c = t.Text
			}
		}
		items = append(items, respMessage{Type: "message", Role: role, Content: c})
		content = nil
	}
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.TextPart, runlet.ImagePart, runlet.FilePart, runlet.AudioPart:
			c, err := respContent(p)
			if err != nil {
				return nil, err
			}
			content = append(content, c)
		case runlet.ToolResultPart:
			flush()
			if p.CallID == "" {
				return nil, fmt.Errorf("tool result has no call ID")
			}
			out, err := respToolOutput(p)
			if err != nil {
				return nil, err
			}
			items = append(items, respFunctionCallOutput{Type: "function_call_output", CallID: p.CallID, Output: out})
		}
		// Reasoning and tool calls outside assistant messages have no input form.
	}
	flush()
	return items, nil
}

// respContent is the input content item of a text, image or file part:
// input_text, input_image or input_file. The Responses API takes no
// audio input: an audio part is an error.
func respContent(p runlet.Part) (any, error) {
	switch p := p.(type) {
	case runlet.TextPart:
		return respInputText{Type: "input_text", Text: p.Text}, nil
	case runlet.ImagePart:
		u := p.URL
		if len(p.Data) > 0 {
			u = dataurl.Encode(p.MediaType, p.Data)
		}
		if u == "" {
			return nil, fmt.Errorf("image part has neither URL nor data")
		}
		detail := p.Detail
		if detail == "" {
			detail = "auto"
		}
		return respInputImage{Type: "input_image", ImageURL: u, Detail: detail}, nil
	case runlet.FilePart:
		f := respInputFile{Type: "input_file", Filename: p.Name}
		if mt, d, ok := dataurl.Inline(p.URL, p.MediaType, p.Data); ok {
			p.MediaType, p.Data = mt, d // a data: URL goes as file_data, not file_url
		}
		switch {
		case len(p.Data) > 0:
			f.FileData = dataurl.Encode(p.MediaType, p.Data)
			if f.Filename == "" {
				f.Filename = "file"
			}
		case p.URL != "":
			f.FileURL = p.URL
		default:
			return nil, fmt.Errorf("file part has neither URL nor data")
		}
		return f, nil
	case runlet.AudioPart:
		return nil, fmt.Errorf("audio part: the Responses API takes no audio input")
	}
	return nil, fmt.Errorf("a %T cannot be input content", p)
}

// respToolOutput is a function_call_output's output: the result's text, or,
// when it holds images or files, the array of input_text, input_image and
// input_file items the API documents for it.
func respToolOutput(p runlet.ToolResultPart) (any, error) {
	parts := toolresult.Parts(p)
	if parts == nil {
		return p.Content, nil
	}
	out := make([]any, 0, len(parts))
	for _, q := range parts {
		c, err := respContent(q)
		if err != nil {
			return nil, fmt.Errorf("tool result %q: %w", p.CallID, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// replayedReasoning reports which of parts, an assistant message's, are
// reasoning items sent back (keep[i]; nil when none is): this provider's,
// with an ID, encrypted or stored, and followed by the item they came
// with. A reasoning item is valid input only with the item that followed
// it, so it decides from the back.
func (m *Responses) replayedReasoning(parts []runlet.Part, store bool) []bool {
	var keep []bool
	for i := len(parts) - 1; i >= 0; i-- {
		r, ok := parts[i].(runlet.ReasoningPart)
		if !ok || r.Provider != m.r.name || r.ID == "" || (r.Encrypted == "" && !store) || i+1 == len(parts) {
			continue
		}
		next := false
		switch n := parts[i+1].(type) {
		case runlet.ToolCallPart:
			next = n.Provider == m.r.name && n.ItemID != ""
		case runlet.TextPart:
			next = n.Provider == m.r.name && n.ItemID != ""
		case runlet.HostedToolPart:
			_, next = m.respHostedItems(n)
		case runlet.ReasoningPart:
			next = keep != nil && keep[i+1]
		}
		if next {
			if keep == nil {
				keep = make([]bool, len(parts))
			}
			keep[i] = true
		}
	}
	return keep
}

// appendAssistant translates an assistant message: text as assistant input
// messages, tool calls as function_call items, and reasoning items this
// provider produced when they can be replayed (see the Responses doc).
func (m *Responses) appendAssistant(items []any, msg runlet.Message, store bool) ([]any, error) {
	parts := msg.Parts
	keep := m.replayedReasoning(parts, store)

	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			items = append(items, respMessage{Type: "message", Role: "assistant", Content: text.String()})
			text.Reset()
		}
	}
	paired := false // the nearest reasoning part before this point was sent
	for i, p := range parts {
		switch p := p.(type) {
		case runlet.TextPart:
			if paired && p.Provider == m.r.name && p.ItemID != "" {
				// The message that followed a replayed reasoning item goes
				// back as that output item, with its ID, so they pair.
				flush()
				items = append(items, respOutputMessage{Type: "message", Role: "assistant", ID: p.ItemID, Status: "completed",
					Content: []respOutputText{{Type: "output_text", Text: p.Text, Annotations: m.respSentAnnotations(p.Citations), Logprobs: []any{}}}})
				paired = false
				continue
			}
			text.WriteString(p.Text)
		case runlet.ReasoningPart:
			if p.Provider != m.r.name {
				continue // foreign continuation state: never sent
			}
			paired = keep != nil && keep[i]
			if !paired {
				continue
			}
			flush()
			r := respReasoning{Type: "reasoning", ID: p.ID, Summary: []respInputText{}, EncryptedContent: p.Encrypted}
			if p.Text != "" {
				r.Summary = append(r.Summary, respInputText{Type: "summary_text", Text: p.Text})
			}
			items = append(items, r)
		case runlet.HostedToolPart:
			// This adapter's built-in tool items go back as received;
			// another provider's (or damaged ones) as assistant text.
			hosted, ok := m.respHostedItems(p)
			if !ok {
				if text.Len() > 0 {
					text.WriteString("\n")
				}
				text.WriteString(p.Text())
				continue
			}
			flush()
			for _, it := range hosted {
				items = append(items, it)
			}
			paired = false
		case runlet.ToolCallPart:
			flush()
			if p.ID == "" || p.Name == "" {
				return nil, fmt.Errorf("tool call without ID or name")
			}
			fc := respFunctionCall{Type: "function_call", CallID: p.ID, Name: p.Name, Arguments: string(p.Arguments)}
			if fc.Arguments == "" {
				fc.Arguments = "{}"
			}
			if paired && p.Provider == m.r.name {
				fc.ID = p.ItemID
			}
			items = append(items, fc)
		}
	}
	flush()
	return items, nil
}
