package uistream

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/runlet/runlet"
)

// AISDKVersion is the version of the `ai` npm package whose UI message
// stream protocol (header x-vercel-ai-ui-message-stream: v1) this package
// speaks, and which its tests run against.
const AISDKVersion = "7.0.173"

// NewAISDKHandler returns a handler speaking the Vercel AI SDK's UI
// message stream protocol, the one useChat (@ai-sdk/react) reads: it
// accepts useChat's request (messages with parts), runs or resumes the
// agent, and streams the run as UI message chunks over server-sent
// events. See the package documentation for the mapping.
func NewAISDKHandler(o Options) http.Handler {
	return newHandler(o, aisdk{})
}

// aisdk is the UI message stream protocol.
type aisdk struct{}

func (aisdk) decode(body []byte) (*turn, error) { return decodeUIRequest(body) }

func (aisdk) header(h http.Header) {
	setSSEHeaders(h)
	h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
}

func (aisdk) encoder(_ context.Context, t *turn, o *Options) encoder {
	e := &uiEncoder{opts: o, announced: make(map[string]bool), pageCalls: make(map[string]bool)}
	for _, d := range t.decisions {
		e.pageCalls[d.CallID] = true // answered on the page, so it has the call as a tool part
	}
	return e
}

// uiEncoder maps one run's events to UI message chunks. The run's own
// agent (depth 0) fills the assistant message; agents called as tools
// send data parts (see the package documentation).
type uiEncoder struct {
	opts *Options

	started  bool
	inStep   bool
	open     string // "text" or "reasoning": the part being streamed
	openID   string
	parts    int  // IDs of text and reasoning parts: "t1", "r2", ...
	stepText bool // text streamed in this step
	stepReas bool // reasoning streamed in this step
	calls    map[int]*uiCall
	// announced holds the calls the page has as tool parts (input
	// available), with their arguments.
	announced map[string]bool
	output    bool // the run's answer was checked against an output schema
	usage     runlet.Usage
	cost      runlet.Cost
	finished  bool
	tripped   *runlet.GuardrailChecked // the tripwire, sent again after a reset-step
	// pageCalls holds the calls of agents called as tools that the page
	// has as tool parts of the message (it was asked to approve them), so
	// their outcome goes to that part too.
	pageCalls map[string]bool
	sourceIDs map[string]string // sources sent, by URL (or file ID)
	hostedN   int               // hosted tool calls without an ID so far
}

// uiCall is a tool call streaming in, by index in its response.
type uiCall struct {
	id, name string
	early    []byte // argument text before the ID came
}

// chunk is one UI message chunk, the fields of every type in one struct
// (Type first on the wire); each type sets its own, the others are left
// out. ErrorText is a pointer because the error types require it even
// when empty.
type chunk struct {
	Type            string          `json:"type"`
	ID              string          `json:"id,omitempty"`
	MessageID       string          `json:"messageId,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	ToolName        string          `json:"toolName,omitempty"`
	ApprovalID      string          `json:"approvalId,omitempty"`
	Delta           string          `json:"delta,omitempty"`
	InputTextDelta  string          `json:"inputTextDelta,omitempty"`
	Input           any             `json:"input,omitempty"`
	Output          json.RawMessage `json:"output,omitempty"`
	ErrorText       *string         `json:"errorText,omitempty"`
	Dynamic         bool            `json:"dynamic,omitempty"`
	FinishReason    string          `json:"finishReason,omitempty"`
	MessageMetadata any             `json:"messageMetadata,omitempty"`
	Data            any             `json:"data,omitempty"`
	Transient       bool            `json:"transient,omitempty"`
	// file, source-url, source-document; tools a provider executed
	URL              string `json:"url,omitempty"`
	MediaType        string `json:"mediaType,omitempty"`
	SourceID         string `json:"sourceId,omitempty"`
	Title            string `json:"title,omitempty"`
	Filename         string `json:"filename,omitempty"`
	ProviderExecuted bool   `json:"providerExecuted,omitempty"`
	ProviderMetadata any    `json:"providerMetadata,omitempty"`
}

func textPtr(s string) *string { return &s }

func (e *uiEncoder) event(w *frameWriter, ev runlet.Event, err error) error {
	h := ev.Header()
	if g, ok := ev.(*runlet.GuardrailChecked); ok { // at any depth: a nested tripwire ends the run too
		if g.Action == runlet.GuardrailTrip {
			e.tripped = g
		}
		return w.data(guardrailChunk(g))
	}
	if h.Depth > 0 {
		return e.nested(w, ev)
	}
	switch ev := ev.(type) {
	case *runlet.RunStarted:
		return e.start(w, h.RunID)
	case *runlet.RunResumed:
		return e.start(w, h.RunID)
	case *runlet.ModelStarted:
		if ev.Purpose != "" && ev.Purpose != runlet.PurposeAgent {
			return nil
		}
		if err := e.endStep(w); err != nil {
			return err
		}
		e.inStep, e.stepText, e.stepReas = true, false, false
		e.calls = nil
		return w.data(chunk{Type: "start-step"})
	case *runlet.TextDelta:
		e.stepText = true
		return e.delta(w, "text", ev.Delta)
	case *runlet.ReasoningDelta:
		e.stepReas = true
		return e.delta(w, "reasoning", ev.Delta)
	case *runlet.ToolCallDelta:
		return e.toolDelta(w, ev)
	case *runlet.ModelFinished:
		if ev.Purpose != "" && ev.Purpose != runlet.PurposeAgent {
			e.usage, e.cost = e.usage.Add(ev.Response.Usage), e.cost.Add(ev.Cost)
			return nil
		}
		return e.modelFinished(w, ev)
	case *runlet.ToolStarted:
		if err := e.closePart(w); err != nil {
			return err
		}
		return e.announce(w, ev.Call)
	case *runlet.ToolFinished:
		return e.toolFinished(w, ev)
	case *runlet.OutputPartial:
		return w.data(chunk{Type: "data-output", ID: "output", Data: ev.JSON})
	case *runlet.OutputChecked:
		e.output = ev.Valid
		return nil
	case *runlet.OutputWithdrawn:
		// A guardrail took the answer back: reset-step removes the step's
		// parts from the page's message; the tripwire's part is sent again.
		if err := e.closePart(w); err != nil {
			return err
		}
		if err := w.data(chunk{Type: "reset-step"}); err != nil {
			return err
		}
		if e.tripped != nil {
			return w.data(guardrailChunk(e.tripped))
		}
		return nil
	case *runlet.HostedToolFinished:
		return e.hosted(w, ev.Part)
	case *runlet.HandoffOccurred:
		return w.data(chunk{Type: "data-handoff", Data: handoffData{From: ev.From, To: ev.To}})
	case *runlet.RunInterrupted:
		return e.interrupted(w, ev)
	case *runlet.RunFinished:
		if e.output && json.Valid([]byte(ev.Result.Output)) {
			if err := w.data(chunk{Type: "data-output", ID: "output", Data: json.RawMessage(ev.Result.Output)}); err != nil {
				return err
			}
		}
		return e.finish(w, "stop", ev.Result)
	case *runlet.RunFailed:
		if err := e.endStep(w); err != nil {
			return err
		}
		if err := w.data(chunk{Type: "error", ErrorText: textPtr(e.opts.ErrorText(err, ev))}); err != nil {
			return err
		}
		return e.finish(w, "error", ev.Result)
	}
	return nil // an event this protocol does not carry, or one newer than this code
}

// start opens the assistant message; its ID is the run's, so a resumed
// run goes on in the message that asked for approval.
func (e *uiEncoder) start(w *frameWriter, runID string) error {
	if e.started {
		return nil
	}
	e.started = true
	if runID == "" {
		return w.data(chunk{Type: "start"})
	}
	return w.data(chunk{Type: "start", MessageID: runID, MessageMetadata: uiMetadata{RunID: runID}})
}

// delta streams text or reasoning, opening a part of that kind.
func (e *uiEncoder) delta(w *frameWriter, kind, delta string) error {
	if delta == "" {
		return nil
	}
	if e.open != kind {
		if err := e.closePart(w); err != nil {
			return err
		}
		e.parts++
		e.open, e.openID = kind, kind[:1]+strconv.Itoa(e.parts)
		if err := w.data(chunk{Type: kind + "-start", ID: e.openID}); err != nil {
			return err
		}
	}
	return w.deltaFrame(kind+"-delta", "id", e.openID, "delta", delta)
}

// closePart ends the text or reasoning part being streamed.
func (e *uiEncoder) closePart(w *frameWriter) error {
	if e.open == "" {
		return nil
	}
	kind := e.open
	e.open = ""
	return w.data(chunk{Type: kind + "-end", ID: e.openID})
}

// endStep closes the step being streamed.
func (e *uiEncoder) endStep(w *frameWriter) error {
	if err := e.closePart(w); err != nil {
		return err
	}
	if !e.inStep {
		return nil
	}
	e.inStep = false
	return w.data(chunk{Type: "finish-step"})
}

// toolDelta streams a tool call's arguments as the model writes them.
func (e *uiEncoder) toolDelta(w *frameWriter, ev *runlet.ToolCallDelta) error {
	if err := e.closePart(w); err != nil {
		return err
	}
	if e.calls == nil {
		e.calls = make(map[int]*uiCall)
	}
	c := e.calls[ev.Index]
	if c == nil {
		c = &uiCall{}
		e.calls[ev.Index] = c
	}
	if c.id == "" {
		if ev.ID == "" || ev.Name == "" && c.name == "" {
			if ev.Name != "" {
				c.name = ev.Name
			}
			c.early = append(c.early, ev.Delta...)
			return nil
		}
		c.id = ev.ID
		if ev.Name != "" {
			c.name = ev.Name
		}
		if err := w.data(chunk{Type: "tool-input-start", ToolCallID: c.id, ToolName: c.name, Dynamic: true}); err != nil {
			return err
		}
		if len(c.early) > 0 {
			early := string(c.early)
			c.early = nil
			if err := w.data(chunk{Type: "tool-input-delta", ToolCallID: c.id, InputTextDelta: early}); err != nil {
				return err
			}
		}
	}
	if ev.Delta == "" {
		return nil
	}
	return w.deltaFrame("tool-input-delta", "toolCallId", c.id, "inputTextDelta", ev.Delta)
}

// modelFinished sends what a model that does not stream said (Generate,
// or a middleware that answers whole), and the calls' complete inputs.
func (e *uiEncoder) modelFinished(w *frameWriter, ev *runlet.ModelFinished) error {
	e.usage, e.cost = e.usage.Add(ev.Response.Usage), e.cost.Add(ev.Cost)
	msg := ev.Response.Message
	if !e.stepReas {
		for _, p := range msg.Parts {
			if r, ok := p.(runlet.ReasoningPart); ok {
				if err := e.delta(w, "reasoning", r.Text); err != nil {
					return err
				}
			}
		}
	}
	if !e.stepText {
		if err := e.delta(w, "text", msg.Text()); err != nil {
			return err
		}
	}
	if err := e.closePart(w); err != nil {
		return err
	}
	for _, p := range msg.Parts {
		if t, ok := p.(runlet.TextPart); ok {
			if err := e.sources(w, t.Citations); err != nil {
				return err
			}
		}
	}
	for _, p := range msg.Parts {
		if c, ok := p.(runlet.ToolCallPart); ok {
			if err := e.announce(w, c); err != nil {
				return err
			}
		}
	}
	return w.data(chunk{Type: "message-metadata", MessageMetadata: e.metadata(nil)})
}

// announce makes sure the page has call as a tool part with its complete
// input: once per call, and again when a person edited the arguments.
func (e *uiEncoder) announce(w *frameWriter, call runlet.ToolCallPart) error {
	key := call.ID + "\x00" + string(call.Arguments)
	if e.announced[key] || e.pageCalls[call.ID] && len(call.OriginalArguments) == 0 {
		return nil // the page has it (a resumed call, as it approved it)
	}
	started := false
	for _, c := range e.calls {
		started = started || c.id == call.ID
	}
	if !started && !e.announced[call.ID] {
		if err := w.data(chunk{Type: "tool-input-start", ToolCallID: call.ID, ToolName: call.Name, Dynamic: true}); err != nil {
			return err
		}
	}
	e.announced[key], e.announced[call.ID] = true, true
	return w.data(chunk{Type: "tool-input-available", ToolCallID: call.ID, ToolName: call.Name, Dynamic: true, Input: jsonOrString(call.Arguments)})
}

// toolFinished sends a call's outcome: its output, its error, or that it
// was denied (rejected by a person, or by a hook).
func (e *uiEncoder) toolFinished(w *frameWriter, ev *runlet.ToolFinished) error {
	if err := e.closePart(w); err != nil {
		return err
	}
	if err := e.announce(w, ev.Call); err != nil {
		return err
	}
	if err := w.data(outcome(ev)); err != nil {
		return err
	}
	return resultFiles(w, ev.Result)
}

// outcome is a finished call's chunk for its tool part.
func outcome(ev *runlet.ToolFinished) chunk {
	id := ev.Call.ID
	switch ev.ErrorKind {
	case runlet.ToolUnknown, runlet.ToolInvalidJSON, runlet.ToolInvalidArgs:
		// The model's call itself was wrong: the protocol's input error.
		return chunk{Type: "tool-input-error", ToolCallID: id, ToolName: ev.Call.Name, Input: jsonOrString(ev.Call.Arguments),
			ErrorText: textPtr(ev.Result.Content), Dynamic: true}
	}
	switch {
	case ev.ErrorKind == runlet.ToolDenied:
		return chunk{Type: "tool-output-denied", ToolCallID: id}
	case ev.Result.IsError:
		return chunk{Type: "tool-output-error", ToolCallID: id, ErrorText: textPtr(ev.Result.Content), Dynamic: true}
	}
	return chunk{Type: "tool-output-available", ToolCallID: id, Output: resultOutput(ev.Result), Dynamic: true}
}

// toolOutput is a result's content: its JSON value when it is JSON (a
// tool returning a struct), else its text as a JSON string.
func toolOutput(r runlet.ToolResultPart) json.RawMessage {
	if b := []byte(r.Content); len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b) {
		return b
	}
	b, _ := json.Marshal(r.Content)
	return b
}

// interrupted asks the page to approve the pending calls. A call's
// approval ID is the run's ID, ":" and the call's ID: unique per call, as
// addToolApprovalResponse needs, and naming the run the answer resumes.
func (e *uiEncoder) interrupted(w *frameWriter, ev *runlet.RunInterrupted) error {
	if err := e.closePart(w); err != nil {
		return err
	}
	for _, call := range ev.Pending {
		if err := e.announce(w, call); err != nil {
			return err
		}
		e.pageCalls[call.ID] = true
		if err := w.data(chunk{Type: "tool-approval-request", ApprovalID: approvalID(ev.RunID, call.ID), ToolCallID: call.ID}); err != nil {
			return err
		}
	}
	return e.finish(w, "tool-calls", ev.Result)
}

// finish closes the step and the message, with the run's usage and cost
// as the message's metadata.
func (e *uiEncoder) finish(w *frameWriter, reason string, res *runlet.Result) error {
	if err := e.endStep(w); err != nil {
		return err
	}
	e.finished = true
	return w.data(chunk{Type: "finish", FinishReason: reason, MessageMetadata: e.metadata(res)})
}

// uiMetadata is the assistant message's metadata (UIMessage.metadata).
type uiMetadata struct {
	RunID  string          `json:"runId,omitempty"`
	Status runlet.RunState `json:"status,omitempty"`
	Usage  runlet.Usage    `json:"usage,omitzero"`
	Cost   *runlet.Cost    `json:"cost,omitempty"` // unset when no call was priced
	Turns  int             `json:"turns,omitempty"`
}

func (e *uiEncoder) metadata(res *runlet.Result) uiMetadata {
	m := uiMetadata{Usage: e.usage}
	cost := e.cost
	if res != nil {
		m.RunID, m.Status, m.Usage, m.Turns = res.RunID, res.Status, res.Usage, res.Turns
		cost = res.Cost
	}
	if cost.Amount != 0 || cost.Unpriced == 0 && m.Usage.Requests > 0 {
		m.Cost = &cost
	}
	return m
}

// end closes a stream whose run ended without a terminal event: a resume
// refused before it started, say.
func (e *uiEncoder) end(w *frameWriter, err error) error {
	if !e.finished {
		if err := e.start(w, ""); err != nil {
			return err
		}
		if err2 := e.endStep(w); err2 != nil {
			return err2
		}
		if err := w.data(chunk{Type: "error", ErrorText: textPtr(e.opts.ErrorText(err, nil))}); err != nil {
			return err
		}
		if err := w.data(chunk{Type: "finish", FinishReason: "error"}); err != nil {
			return err
		}
	}
	return w.raw("data: ", []byte("[DONE]"))
}
