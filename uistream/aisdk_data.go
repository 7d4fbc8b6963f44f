package uistream

import (
	"encoding/json"

	"github.com/runlet/runlet"
)

// The data parts of the AI SDK handler: what the protocol has no chunk
// for (agents called as tools, handoffs, guardrails) travels as data-*
// chunks, which useChat keeps as message parts (or, transient, hands to
// onData only).

// nested maps the events of an agent called as a tool (depth > 0) to data
// parts: the page shows them under the call (CallPath) that ran it.
func (e *uiEncoder) nested(w *frameWriter, ev runlet.Event) error {
	h := ev.Header()
	switch ev := ev.(type) {
	case *runlet.AgentStarted:
		return w.data(chunk{Type: "data-agent", ID: h.CallPath, Data: agentData{Agent: h.Agent, CallPath: h.CallPath, Depth: h.Depth, Status: "running"}})
	case *runlet.AgentFinished:
		d := agentData{Agent: h.Agent, CallPath: h.CallPath, Depth: h.Depth, Status: string(ev.Status), ErrorType: ev.ErrorType}
		if ev.Result != nil && ev.Status == runlet.StateFinished {
			d.Output = ev.Result.Output
		}
		return w.data(chunk{Type: "data-agent", ID: h.CallPath, Data: d})
	case *runlet.TextDelta:
		return w.data(chunk{Type: "data-agent-delta", Transient: true, Data: agentDelta{CallPath: h.CallPath, Agent: h.Agent, Delta: ev.Delta}})
	case *runlet.ToolStarted:
		return w.data(chunk{Type: "data-agent-tool", ID: h.CallPath + "/" + ev.Call.ID, Data: agentTool{CallPath: h.CallPath, Agent: h.Agent, ToolCallID: ev.Call.ID, ToolName: ev.Call.Name, Input: jsonOrString(ev.Call.Arguments), State: "running"}})
	case *runlet.ToolFinished:
		if e.pageCalls[ev.Call.ID] {
			if err := w.data(outcome(ev)); err != nil {
				return err
			}
		}
		t := agentTool{CallPath: h.CallPath, Agent: h.Agent, ToolCallID: ev.Call.ID, ToolName: ev.Call.Name, Input: jsonOrString(ev.Call.Arguments), State: "output-available", Output: toolOutput(ev.Result)}
		if ev.Result.IsError {
			t.State, t.Output, t.ErrorText = "output-error", nil, ev.Result.Content
		}
		return w.data(chunk{Type: "data-agent-tool", ID: h.CallPath + "/" + ev.Call.ID, Data: t})
	case *runlet.ModelFinished:
		e.usage, e.cost = e.usage.Add(ev.Response.Usage), e.cost.Add(ev.Cost)
	}
	return nil
}

// agentData is a data-agent part: an agent called as a tool.
type agentData struct {
	Agent     string `json:"agent"`
	CallPath  string `json:"callPath"`
	Depth     int    `json:"depth"`
	Status    string `json:"status"` // running, finished, interrupted, failed
	Output    string `json:"output,omitempty"`
	ErrorType string `json:"errorType,omitempty"`
}

// handoffData is a data-handoff part.
type handoffData struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// agentDelta is a data-agent-delta part: text of an agent called as a tool.
type agentDelta struct {
	CallPath string `json:"callPath"`
	Agent    string `json:"agent"`
	Delta    string `json:"delta"`
}

// agentTool is a data-agent-tool part: a tool call of such an agent.
type agentTool struct {
	CallPath   string          `json:"callPath"`
	Agent      string          `json:"agent"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Input      any             `json:"input"`
	State      string          `json:"state"`
	Output     json.RawMessage `json:"output,omitempty"`
	ErrorText  string          `json:"errorText,omitempty"`
}

func jsonOrString(b json.RawMessage) any {
	if json.Valid(b) {
		return b
	}
	return string(b)
}

// guardrailData is a data-guardrail part: a guardrail's check. A passing
// check is transient; a rejection or a tripwire stays in the message.
type guardrailData struct {
	Guardrail  string          `json:"guardrail"`
	Stage      string          `json:"stage"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Action     string          `json:"action"`
	Message    string          `json:"message,omitempty"`
	Info       json.RawMessage `json:"info,omitempty"`
	Failed     bool            `json:"failed,omitempty"` // the check itself failed; its error is not sent
}

func guardrailChunk(ev *runlet.GuardrailChecked) chunk {
	d := guardrailData{Guardrail: ev.Guardrail, Stage: string(ev.Stage), ToolCallID: ev.CallID,
		Action: string(ev.Action), Message: ev.Message, Info: ev.Info, Failed: ev.Error != ""}
	return chunk{Type: "data-guardrail", Data: d, Transient: ev.Action == runlet.GuardrailPass || ev.Action == ""}
}
