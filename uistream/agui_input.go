package uistream

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/runlet/runlet"
)

// decodeAGUI reads a RunAgentInput into a turn: a resume when it answers
// interrupts, else a new run whose input is the trailing user messages
// and whose history is what precedes them.
func decodeAGUI(body []byte) (*RunAgentInput, *turn, error) {
	var in RunAgentInput
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, nil, fmt.Errorf("the body is not an AG-UI RunAgentInput: %v", err)
	}
	if in.ThreadID == "" || in.RunID == "" {
		return nil, nil, errors.New("RunAgentInput needs a threadId and a runId")
	}
	t := &turn{chatID: in.ThreadID}
	pageTools, tools, err := aguiPageTools(in.Tools)
	if err != nil {
		return nil, nil, err
	}
	t.tools = tools
	if len(in.Resume) == 0 {
		run, decisions, ok, err := aguiPageResults(in.Messages, pageTools)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			t.resume, t.decisions = run, decisions
			return &in, t, nil
		}
	}
	if len(in.Resume) > 0 {
		runID, decisions, err := aguiDecisions(in.Resume)
		if err != nil {
			return nil, nil, err
		}
		t.resume, t.decisions = runID, decisions
		return &in, t, nil
	}
	msgs, err := aguiHistory(in.Messages)
	if err != nil {
		return nil, nil, err
	}
	n := len(msgs)
	for n > 0 && msgs[n-1].Role == runlet.RoleUser {
		n--
	}
	if n == len(msgs) {
		return nil, nil, errors.New("RunAgentInput has no new user message to answer (and no resume)")
	}
	t.history, t.input = msgs[:n], msgs[n:]
	if len(in.Context) > 0 {
		t.input[0].Parts = append([]runlet.Part{runlet.TextPart{Text: aguiContextText(in.Context)}}, t.input[0].Parts...)
	}
	return &in, t, nil
}

// aguiContextText writes the client's context entries as the text the
// model reads before the user's message. They come from the page, so
// they go in the user's message, never in the instructions.
func aguiContextText(ctx []AGUIContext) string {
	var b strings.Builder
	b.WriteString("Context from the application:\n")
	for _, c := range ctx {
		fmt.Fprintf(&b, "- %s: %s\n", c.Description, c.Value)
	}
	return b.String()
}

// aguiHistory turns AG-UI messages into Runlet messages. Messages of
// agents called as tools (subagentRunId), the client's reasoning,
// activity, system and developer messages are left out: the server's
// agent owns its instructions and its reasoning state, and a sub-agent's
// messages are not the conversation. Consecutive tool messages make one
// RoleTool message, as a run writes them.
func aguiHistory(in []AGUIMessage) ([]runlet.Message, error) {
	out := make([]runlet.Message, 0, len(in))
	names := make(map[string]string) // tool call ID -> tool name
	for i, m := range in {
		if m.SubagentRunID != "" {
			continue
		}
		switch m.Role {
		case "user":
			parts, err := aguiParts(m.Content)
			if err != nil {
				return nil, fmt.Errorf("message %d (user): %w", i, err)
			}
			out = append(out, runlet.Message{Role: runlet.RoleUser, Parts: parts})
		case "assistant":
			msg := runlet.Message{Role: runlet.RoleAssistant}
			if text, err := aguiString(m.Content); err != nil {
				return nil, fmt.Errorf("message %d (assistant): %w", i, err)
			} else if text != "" {
				msg.Parts = append(msg.Parts, runlet.TextPart{Text: text})
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Function.Name == "" {
					return nil, fmt.Errorf("message %d (assistant): a tool call needs an id and a function name", i)
				}
				args := json.RawMessage(c.Function.Arguments)
				if len(bytes.TrimSpace(args)) == 0 {
					args = json.RawMessage("{}")
				}
				names[c.ID] = c.Function.Name
				msg.Parts = append(msg.Parts, runlet.ToolCallPart{ID: c.ID, Name: c.Function.Name, Arguments: args})
			}
			if len(msg.Parts) > 0 {
				out = append(out, msg)
			}
		case "tool":
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("message %d (tool): toolCallId is missing", i)
			}
			part, err := aguiToolMessage(m.Content)
			if err != nil {
				return nil, fmt.Errorf("message %d (tool): %w", i, err)
			}
			if m.Error != "" && part.Content == "" {
				part.Content = m.Error
			}
			part.CallID, part.Name, part.IsError = m.ToolCallID, names[m.ToolCallID], m.Error != ""
			if n := len(out); n > 0 && out[n-1].Role == runlet.RoleTool {
				out[n-1].Parts = append(out[n-1].Parts, part)
			} else {
				out = append(out, runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{part}})
			}
		case "system", "developer", "reasoning", "activity":
			// see the doc comment
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// aguiString reads content that must be a string (or absent).
func aguiString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errors.New("content must be a string")
	}
	return s, nil
}

// aguiContentParts reads content that is a string or an array of parts.
func aguiContentParts(raw json.RawMessage) ([]aguiPart, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var parts []aguiPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return nil, fmt.Errorf("content parts: %v", err)
		}
		return parts, nil
	}
	s, err := aguiString(raw)
	if err != nil {
		return nil, errors.New("content must be a string or an array of parts")
	}
	return []aguiPart{{Type: "text", Text: s}}, nil
}

// aguiParts reads a user message's content into Runlet parts.
func aguiParts(raw json.RawMessage) ([]runlet.Part, error) {
	parts, err := aguiContentParts(raw)
	if err != nil {
		return nil, err
	}
	out := make([]runlet.Part, 0, len(parts))
	for i, p := range parts {
		part, err := aguiPartOf(p)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", i, err)
		}
		out = append(out, part)
	}
	return out, nil
}

func aguiPartOf(p aguiPart) (runlet.Part, error) {
	if p.Type == "text" {
		return runlet.TextPart{Text: p.Text}, nil
	}
	if p.Type != "image" && p.Type != "document" && p.Type != "audio" {
		return nil, fmt.Errorf("%q parts are not supported", p.Type)
	}
	if p.Source == nil {
		return nil, fmt.Errorf("%s part without a source", p.Type)
	}
	var data []byte
	var link string
	switch p.Source.Type {
	case "data":
		b, err := base64.StdEncoding.DecodeString(p.Source.Value)
		if err != nil {
			return nil, fmt.Errorf("%s part: the data is not base64", p.Type)
		}
		data = b
	case "url":
		u, err := url.Parse(p.Source.Value)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("%s part: the URL must be https", p.Type)
		}
		link = p.Source.Value
	default:
		return nil, fmt.Errorf("%s part: %q sources are not supported", p.Type, p.Source.Type)
	}
	switch p.Type {
	case "image":
		return runlet.ImagePart{URL: link, MediaType: p.Source.MimeType, Data: data}, nil
	case "audio":
		return runlet.AudioPart{URL: link, MediaType: p.Source.MimeType, Data: data}, nil
	}
	return runlet.FilePart{URL: link, MediaType: p.Source.MimeType, Data: data}, nil
}

// aguiToolMessage reads a tool message's content: a string, or parts. Its
// Content is the text of the text parts; Parts holds them all when some
// are not text.
func aguiToolMessage(raw json.RawMessage) (runlet.ToolResultPart, error) {
	parts, err := aguiParts(raw)
	if err != nil {
		return runlet.ToolResultPart{}, err
	}
	var res runlet.ToolResultPart
	var b strings.Builder
	media := false
	for _, p := range parts {
		if t, ok := p.(runlet.TextPart); ok {
			b.WriteString(t.Text)
		} else {
			media = true
		}
	}
	res.Content = b.String()
	if media {
		res.Parts = parts
	}
	return res, nil
}

// The interrupt ID names the interrupted Runlet run and the call, each
// query-escaped, joined by a colon ("run_5f2c…:call_1"): a resume needs
// nothing else, in this process or another sharing the store.

func aguiInterruptID(runID, callID string) string {
	return url.QueryEscape(runID) + ":" + url.QueryEscape(callID)
}

func parseAGUIInterruptID(id string) (runID, callID string, ok bool) {
	r, c, found := strings.Cut(id, ":")
	if !found {
		return "", "", false
	}
	r, err1 := url.QueryUnescape(r)
	c, err2 := url.QueryUnescape(c)
	if err1 != nil || err2 != nil || r == "" || c == "" {
		return "", "", false
	}
	return r, c, true
}

// aguiApproval is the payload of a resolved interrupt, as its
// responseSchema (aguiResponseSchema) describes it.
type aguiApproval struct {
	Approved   *bool           `json:"approved"`
	EditedArgs json.RawMessage `json:"editedArgs"`
	Reason     string          `json:"reason"`
}

// aguiResponseSchema is the responseSchema of every interrupt AGUI sends,
// the pattern the AG-UI interrupts page recommends for approve-with-edits.
const aguiResponseSchema = `{"type":"object","properties":{` +
	`"approved":{"type":"boolean"},` +
	`"editedArgs":{"type":"object","description":"Full replacement of the tool's arguments."},` +
	`"reason":{"type":"string","description":"Why the call is rejected; the model reads it."}},` +
	`"required":["approved"]}`

// aguiDecisions reads the resume entries into the run they resume and one
// Decision per entry. A cancelled interrupt rejects its call.
func aguiDecisions(entries []AGUIResume) (string, []runlet.Decision, error) {
	var run string
	decisions := make([]runlet.Decision, 0, len(entries))
	for _, e := range entries {
		r, call, ok := parseAGUIInterruptID(e.InterruptID)
		if !ok {
			return "", nil, fmt.Errorf("resume: unknown interrupt %q", sanitizeLine(e.InterruptID))
		}
		if run != "" && r != run {
			return "", nil, errors.New("resume: the interrupts answered belong to different runs")
		}
		run = r
		switch e.Status {
		case "cancelled":
			decisions = append(decisions, runlet.Reject(call, "The user cancelled this call."))
		case "resolved":
			var a aguiApproval
			if err := json.Unmarshal(e.Payload, &a); err != nil || a.Approved == nil {
				return "", nil, fmt.Errorf("resume: interrupt %q needs a payload {\"approved\": true|false}", sanitizeLine(e.InterruptID))
			}
			switch {
			case !*a.Approved:
				decisions = append(decisions, runlet.Reject(call, cmp.Or(a.Reason, "The user rejected this call.")))
			case len(a.EditedArgs) > 0 && string(a.EditedArgs) != "null":
				decisions = append(decisions, runlet.ApproveWithArguments(call, a.EditedArgs))
			default:
				decisions = append(decisions, runlet.Approve(call))
			}
		default:
			return "", nil, fmt.Errorf("resume: status %q is neither resolved nor cancelled", sanitizeLine(e.Status))
		}
	}
	return run, decisions, nil
}
