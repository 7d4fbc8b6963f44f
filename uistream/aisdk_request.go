package uistream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
)

// uiRequest is the body useChat's default transport posts
// (HttpChatTransport): the chat's ID, all its messages, what triggered
// the request, and any fields the page added (ignored here).
type uiRequest struct {
	ID       string      `json:"id"`
	Messages []uiMessage `json:"messages"`
	Trigger  string      `json:"trigger"`
}

// uiMessage is a UIMessage: an ID, a role and parts.
type uiMessage struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Parts []uiPart `json:"parts"`
}

// uiPart holds the fields of every UIMessagePart this package reads;
// Type says which apply.
type uiPart struct {
	Type string `json:"type"`
	// text, reasoning
	Text string `json:"text"`
	// file
	MediaType string `json:"mediaType"`
	Filename  string `json:"filename"`
	URL       string `json:"url"`
	// tool-NAME, dynamic-tool
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	State      string          `json:"state"`
	Input      json.RawMessage `json:"input"`
	Output     json.RawMessage `json:"output"`
	ErrorText  string          `json:"errorText"`
	Approval   *uiApproval     `json:"approval"`
	// ProviderExecuted marks a provider-hosted tool's part, which is no
	// call of the agent's tools.
	ProviderExecuted bool `json:"providerExecuted"`
}

// uiApproval is a tool part's approval: its ID, and the answer once given.
type uiApproval struct {
	ID       string `json:"id"`
	Approved *bool  `json:"approved"`
	Reason   string `json:"reason"`
}

// maxMessages bounds the messages of one request, beside its byte size.
const maxMessages = 10000

// decodeUIRequest reads useChat's request into a turn. The last message
// says what to do: a user message is the input of a new run, after the
// messages before it; an assistant message whose tool parts answer
// approvals (state "approval-responded", as addToolApprovalResponse
// leaves them) resumes the run that asked, named by the approval ID.
func decodeUIRequest(body []byte) (*turn, error) {
	var req uiRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("the body is not a chat request: %v", err)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("the request has no messages")
	}
	if len(req.Messages) > maxMessages {
		return nil, fmt.Errorf("the request has over %d messages", maxMessages)
	}
	t := &turn{chatID: req.ID}
	last := req.Messages[len(req.Messages)-1]
	switch last.Role {
	case "assistant":
		runID, decisions, err := approvalAnswers(last)
		if err != nil {
			return nil, err
		}
		t.resume, t.decisions = runID, decisions
		return t, nil
	case "user":
	default:
		return nil, fmt.Errorf("the last message's role is %q; want user, or assistant answering approvals", sanitizeLine(last.Role))
	}
	history, err := historyOf(req.Messages[:len(req.Messages)-1])
	if err != nil {
		return nil, err
	}
	input, err := userMessage(last)
	if err != nil {
		return nil, err
	}
	if len(input.Parts) == 0 {
		return nil, errors.New("the last user message is empty")
	}
	t.history, t.input = history, []runlet.Message{input}
	return t, nil
}

// approvalID is a pending call's approval ID: the run's ID and the call's.
func approvalID(runID, callID string) string { return runID + ":" + callID }

// approvalAnswers reads the decisions in the last step of an assistant
// message: one per tool part in state "approval-responded", whose
// approval IDs (see approvalID) all name the run they resume.
func approvalAnswers(m uiMessage) (runID string, decisions []runlet.Decision, err error) {
	parts := m.Parts
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i].Type == "step-start" {
			parts = parts[i+1:]
			break
		}
	}
	for _, p := range parts {
		if !isToolPart(p.Type) || p.State != "approval-responded" {
			continue
		}
		if p.Approval == nil || p.Approval.ID == "" || p.Approval.Approved == nil || p.ToolCallID == "" {
			return "", nil, errors.New("a tool part in state approval-responded lacks its approval, approval ID or call ID")
		}
		id, ok := strings.CutSuffix(p.Approval.ID, ":"+p.ToolCallID)
		if !ok || id == "" {
			return "", nil, errors.New("an approval ID does not name its run and call")
		}
		if runID != "" && id != runID {
			return "", nil, errors.New("the approvals answered belong to different runs")
		}
		runID = id
		d := runlet.Reject(p.ToolCallID, p.Approval.Reason)
		if *p.Approval.Approved {
			d = runlet.Approve(p.ToolCallID)
		}
		decisions = append(decisions, d)
	}
	if runID == "" {
		return "", nil, errors.New("the last message is the assistant's but answers no approval")
	}
	return runID, decisions, nil
}

// historyOf turns the messages before the input into Runlet history. The
// client holds this copy, so it is input like any other: system messages
// are dropped (the agent's instructions are the server's), reasoning is
// dropped (a provider's signature cannot be checked), and a tool call
// goes back only with its output, as a call and its result.
func historyOf(msgs []uiMessage) ([]runlet.Message, error) {
	var out []runlet.Message
	for _, m := range msgs {
		switch m.Role {
		case "user":
			um, err := userMessage(m)
			if err != nil {
				return nil, err
			}
			if len(um.Parts) > 0 {
				out = append(out, um)
			}
		case "assistant":
			out = appendAssistant(out, m)
		case "system":
		default:
			return nil, fmt.Errorf("a message has role %q; want user, assistant or system", sanitizeLine(m.Role))
		}
	}
	return out, nil
}

// userMessage keeps a user message's text and files.
func userMessage(m uiMessage) (runlet.Message, error) {
	msg := runlet.Message{Role: runlet.RoleUser}
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			if p.Text != "" {
				msg.Parts = append(msg.Parts, runlet.TextPart{Text: p.Text})
			}
		case "file":
			part, err := filePart(p)
			if err != nil {
				return msg, err
			}
			msg.Parts = append(msg.Parts, part)
		}
	}
	return msg, nil
}

// filePart turns a file part into an image or a file. Its URL must be a
// data: URL (what useChat makes of an uploaded file) or https: the
// provider, not this server, fetches that one.
func filePart(p uiPart) (runlet.Part, error) {
	mt := p.MediaType
	var data []byte
	url := ""
	switch {
	case dataurl.Is(p.URL):
		umt, d, ok := dataurl.Parse(p.URL)
		if !ok {
			return nil, errors.New("a file part's data: URL is malformed")
		}
		if mt == "" {
			mt = umt
		}
		data = d
	case strings.HasPrefix(p.URL, "https://"):
		url = p.URL
	default:
		return nil, errors.New("a file part's URL must be a data: or https: URL")
	}
	if strings.HasPrefix(dataurl.MediaType(mt), "image/") {
		return runlet.ImagePart{URL: url, MediaType: mt, Data: data}, nil
	}
	return runlet.FilePart{Name: p.Filename, URL: url, MediaType: mt, Data: data}, nil
}

// appendAssistant appends an assistant UI message as Runlet messages: one
// assistant message per step (a "step-start" part begins one), each
// followed by a tool message with the results of its finished calls.
func appendAssistant(out []runlet.Message, m uiMessage) []runlet.Message {
	var msg runlet.Message
	var results runlet.Message
	flush := func() {
		if len(msg.Parts) > 0 {
			out = append(out, msg)
			if len(results.Parts) > 0 {
				out = append(out, results)
			}
		}
		msg = runlet.Message{Role: runlet.RoleAssistant}
		results = runlet.Message{Role: runlet.RoleTool}
	}
	flush()
	for _, p := range m.Parts {
		switch {
		case p.Type == "step-start":
			flush()
		case p.Type == "text":
			if p.Text != "" {
				msg.Parts = append(msg.Parts, runlet.TextPart{Text: p.Text})
			}
		case isToolPart(p.Type):
			call, res, ok := toolPair(p)
			if ok {
				msg.Parts = append(msg.Parts, call)
				results.Parts = append(results.Parts, res)
			}
		}
	}
	flush()
	return out
}

// toolPair is a finished tool part as a call and its result; ok is false
// for a call without an outcome, which goes back to no model, and for a
// provider-hosted tool's part (its provider's items cannot be rebuilt
// from the page's copy).
func toolPair(p uiPart) (runlet.ToolCallPart, runlet.ToolResultPart, bool) {
	if p.ProviderExecuted {
		return runlet.ToolCallPart{}, runlet.ToolResultPart{}, false
	}
	name := p.ToolName
	if p.Type != "dynamic-tool" {
		name = strings.TrimPrefix(p.Type, "tool-")
	}
	args := p.Input
	if len(args) == 0 || !json.Valid(args) || args[0] != '{' {
		args = json.RawMessage(`{}`)
	}
	call := runlet.ToolCallPart{ID: p.ToolCallID, Name: name, Arguments: args}
	res := runlet.ToolResultPart{CallID: p.ToolCallID, Name: name}
	switch p.State {
	case "output-available":
		res.Content = outputText(p.Output)
	case "output-error":
		res.Content, res.IsError = p.ErrorText, true
	case "output-denied":
		res.Content, res.IsError = "Error: the call was rejected", true
		if p.Approval != nil && p.Approval.Reason != "" {
			res.Content += ": " + p.Approval.Reason
		}
	default:
		return call, res, false
	}
	if p.ToolCallID == "" || name == "" {
		return call, res, false
	}
	return call, res, true
}

// outputText is a tool output as the tool's result text: a JSON string is
// its text, which is how this package sends a text result.
func outputText(out json.RawMessage) string {
	var s string
	if json.Unmarshal(out, &s) == nil {
		return s
	}
	return string(out)
}

// isToolPart reports whether a UI part type is a tool call's.
func isToolPart(typ string) bool {
	return typ == "dynamic-tool" || strings.HasPrefix(typ, "tool-")
}
