package uistream

import (
	"errors"
	"slices"
	"strconv"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/wirejson"
)

// aguiEncoder writes one run's events as AG-UI events (see the mapping
// table in the package doc). It keeps what the protocol needs open and
// closed in order: a text message, a reasoning message, a step and the
// tool calls of the current model call, per agent (the run's own, and
// each agent called as a tool, by CallPath).
type aguiEncoder struct {
	in    *RunAgentInput
	opts  *Options
	state *aguiState // nil without state keys or a session

	started bool // RUN_STARTED written
	ended   bool // RUN_FINISHED or RUN_ERROR written
	nextID  int
	scopes  map[string]*aguiScope // by CallPath; "" is the run's own agent
	order   []string              // CallPaths in the order they opened
	callSub map[string]string     // tool call ID -> subagentRunId of the agent that made it
	typed   bool                  // the run checks its answer against an output schema
	// pageTools names the page's tools the run offers (frontend tools).
	pageTools map[string]bool
}

// aguiScope is what is open for one agent.
type aguiScope struct {
	sub       string      // subagentRunId; "" for the run's own agent
	step      string      // open step
	text      string      // open text message
	reasoning string      // open reasoning message
	turnMsg   string      // the assistant message of the current model call
	textUsed  bool        // turnMsg already named a text message
	texts     []string    // the current model call's text messages, for OutputWithdrawn
	sawText   bool        // text streamed in the current model call
	sawReason bool        // reasoning streamed in the current model call
	calls     []*aguiCall // the current model call's, by stream index
}

// aguiCall is a tool call of the current model call as it streams.
type aguiCall struct {
	index   int
	id      string
	name    string
	args    []byte // fragments received before the call could be started
	started bool
	ended   bool
}

func newAGUIEncoder(in *RunAgentInput, o *Options, st *aguiState) *aguiEncoder {
	return &aguiEncoder{in: in, opts: o, state: st, scopes: make(map[string]*aguiScope), callSub: make(map[string]string),
		pageTools: make(map[string]bool)}
}

func (e *aguiEncoder) id() string {
	e.nextID++
	return e.in.RunID + "-" + strconv.Itoa(e.nextID)
}

func base(typ string, ev runlet.Event) aguiBase {
	b := aguiBase{Type: typ}
	if ev != nil {
		if t := ev.Header().Time; !t.IsZero() {
			b.Timestamp = t.UnixMilli()
		}
	}
	return b
}

func (e *aguiEncoder) scope(path string) *aguiScope {
	s := e.scopes[path]
	if s == nil {
		s = &aguiScope{sub: path}
		e.scopes[path] = s
		e.order = append(e.order, path)
	}
	return s
}

// event writes what ev maps to.
func (e *aguiEncoder) event(w *frameWriter, ev runlet.Event, err error) error {
	if e.ended {
		return nil
	}
	h := ev.Header()
	s := e.scope(h.CallPath)
	switch ev.(type) {
	case *runlet.RunStarted, *runlet.RunResumed:
	default:
		// A run refused before it started (a resume whose run is gone)
		// fails at once; AG-UI still opens every run with RUN_STARTED.
		if err := e.runStarted(w, nil, ""); err != nil {
			return err
		}
	}
	switch ev := ev.(type) {
	case *runlet.RunStarted:
		return e.runStarted(w, ev, ev.SessionID)
	case *runlet.RunResumed:
		return e.runStarted(w, ev, ev.SessionID)
	case *runlet.StateChanged:
		if err := e.closeStep(w, s, ev); err != nil {
			return err
		}
		if ev.To == runlet.StateThinking || ev.To == runlet.StateActing {
			s.step = string(ev.To)
			return w.data(aguiStep{aguiBase: base("STEP_STARTED", ev), SubagentRunID: s.sub, StepName: s.step})
		}
	case *runlet.ModelStarted:
		if isAgentCall(ev.Purpose) {
			if err := e.closeMessages(w, s, ev); err != nil {
				return err
			}
			s.turnMsg, s.textUsed, s.sawText, s.sawReason = e.id(), false, false, false
			s.calls, s.texts = s.calls[:0], s.texts[:0]
		}
	case *runlet.TextDelta:
		return e.text(w, s, ev, ev.Delta)
	case *runlet.ReasoningDelta:
		return e.reasoning(w, s, ev, ev.Delta)
	case *runlet.ToolCallDelta:
		return e.toolDelta(w, s, ev)
	case *runlet.ModelFinished:
		return e.modelFinished(w, s, ev)
	case *runlet.ToolFinished:
		return e.toolFinished(w, s, ev)
	case *runlet.AgentStarted:
		return e.subagentStarted(w, ev)
	case *runlet.AgentFinished:
		return e.subagentFinished(w, s, ev)
	case *runlet.HostedToolFinished:
		return e.custom(w, s, ev, "runlet.hosted_tool", aguiHosted(ev.Part))
	case *runlet.HandoffOccurred:
		return e.custom(w, s, ev, "runlet.handoff", map[string]string{"from": ev.From, "to": ev.To})
	case *runlet.OutputPartial:
		e.typed = true
		return e.custom(w, s, ev, "runlet.output.partial", map[string]any{"attempt": ev.Attempt, "json": ev.JSON})
	case *runlet.OutputChecked:
		e.typed = true
		return e.custom(w, s, ev, "runlet.output.checked", ev)
	case *runlet.GuardrailChecked:
		return e.custom(w, s, ev, "runlet.guardrail", aguiGuardrail{Guardrail: ev.Guardrail, Stage: string(ev.Stage),
			ToolCallID: ev.CallID, Action: string(ev.Action), Message: ev.Message, Info: ev.Info, Failed: ev.Error != ""})
	case *runlet.OutputWithdrawn:
		if err := e.closeMessages(w, s, ev); err != nil {
			return err
		}
		return e.custom(w, s, ev, "runlet.output.withdrawn", map[string]any{
			"guardrail": ev.Guardrail, "stage": ev.Stage, "messageIds": append([]string{}, s.texts...)})
	case *runlet.RunInterrupted:
		return e.interrupted(w, ev)
	case *runlet.RunFinished:
		return e.finished(w, ev)
	case *runlet.RunFailed:
		return e.failed(w, ev, err)
	}
	// ContextPrepared, ToolStarted and event types this version does not
	// know carry nothing the page needs (a ModelStarted's request even
	// holds the agent's instructions): they are not sent.
	return nil
}

// end closes a stream that ended without a terminal event, such as a
// resume refused before it started.
func (e *aguiEncoder) end(w *frameWriter, err error) error {
	if e.ended {
		return nil
	}
	if err == nil {
		err = errors.New("the run ended without a result")
	}
	if err := e.runStarted(w, nil, ""); err != nil {
		return err
	}
	return e.runError(w, nil, err, nil)
}

func isAgentCall(purpose string) bool { return purpose == "" || purpose == runlet.PurposeAgent }

func (e *aguiEncoder) runStarted(w *frameWriter, ev runlet.Event, session string) error {
	if e.started {
		return nil
	}
	e.started = true
	err := w.data(aguiRunStarted{aguiBase: base("RUN_STARTED", ev), ThreadID: e.in.ThreadID, RunID: e.in.RunID,
		ParentRunID: e.in.ParentRunID, ProtocolVersion: AGUIProtocolVersion})
	if err != nil || e.state == nil || ev == nil {
		return err
	}
	return e.state.start(w, ev, session, e.in.State)
}

func (e *aguiEncoder) closeStep(w *frameWriter, s *aguiScope, ev runlet.Event) error {
	if s.step == "" {
		return nil
	}
	name := s.step
	s.step = ""
	return w.data(aguiStep{aguiBase: base("STEP_FINISHED", ev), SubagentRunID: s.sub, StepName: name})
}

// closeMessages ends the open text and reasoning messages of s.
func (e *aguiEncoder) closeMessages(w *frameWriter, s *aguiScope, ev runlet.Event) error {
	if s.text != "" {
		id := s.text
		s.text = ""
		if err := w.data(aguiMessageEvent{aguiBase: base("TEXT_MESSAGE_END", ev), SubagentRunID: s.sub, MessageID: id}); err != nil {
			return err
		}
	}
	if s.reasoning != "" {
		id := s.reasoning
		s.reasoning = ""
		if err := w.data(aguiMessageEvent{aguiBase: base("REASONING_MESSAGE_END", ev), SubagentRunID: s.sub, MessageID: id}); err != nil {
			return err
		}
		return w.data(aguiMessageEvent{aguiBase: base("REASONING_END", ev), SubagentRunID: s.sub, MessageID: id})
	}
	return nil
}

func (e *aguiEncoder) text(w *frameWriter, s *aguiScope, ev runlet.Event, delta string) error {
	if delta == "" {
		return nil
	}
	s.sawText = true
	if s.text == "" {
		if err := e.closeMessages(w, s, ev); err != nil {
			return err
		}
		if s.turnMsg == "" {
			s.turnMsg = e.id()
		}
		s.text = s.turnMsg
		if s.textUsed {
			s.text = e.id() // a second stretch of text in one answer
		}
		s.textUsed = true
		s.texts = append(s.texts, s.text)
		if err := w.data(aguiMessageEvent{aguiBase: base("TEXT_MESSAGE_START", ev), SubagentRunID: s.sub, MessageID: s.text, Role: "assistant", Name: ev.Header().Agent}); err != nil {
			return err
		}
	}
	return deltaEvent(w, "TEXT_MESSAGE_CONTENT", ev, s.sub, "messageId", s.text, delta)
}

func (e *aguiEncoder) reasoning(w *frameWriter, s *aguiScope, ev runlet.Event, delta string) error {
	if delta == "" {
		return nil
	}
	s.sawReason = true
	if s.reasoning == "" {
		if err := e.closeMessages(w, s, ev); err != nil {
			return err
		}
		s.reasoning = e.id()
		if err := w.data(aguiMessageEvent{aguiBase: base("REASONING_START", ev), SubagentRunID: s.sub, MessageID: s.reasoning}); err != nil {
			return err
		}
		if err := w.data(aguiMessageEvent{aguiBase: base("REASONING_MESSAGE_START", ev), SubagentRunID: s.sub, MessageID: s.reasoning, Role: "reasoning"}); err != nil {
			return err
		}
	}
	return deltaEvent(w, "REASONING_MESSAGE_CONTENT", ev, s.sub, "messageId", s.reasoning, delta)
}

// toolDelta streams a tool call: TOOL_CALL_START once its ID and name are
// known (fragments before that wait), then TOOL_CALL_ARGS per fragment.
func (e *aguiEncoder) toolDelta(w *frameWriter, s *aguiScope, ev *runlet.ToolCallDelta) error {
	if err := e.closeMessages(w, s, ev); err != nil {
		return err
	}
	var c *aguiCall
	for _, x := range s.calls {
		if x.index == ev.Index {
			c = x
		}
	}
	if c == nil {
		c = &aguiCall{index: ev.Index}
		s.calls = append(s.calls, c)
	}
	if c.id == "" {
		c.id = ev.ID
	}
	if c.name == "" {
		c.name = ev.Name
	}
	if c.started {
		return e.toolArgs(w, s, ev, c.id, ev.Delta)
	}
	c.args = append(c.args, ev.Delta...)
	if c.id == "" || c.name == "" {
		return nil
	}
	return e.startCall(w, s, ev, c)
}

func (e *aguiEncoder) startCall(w *frameWriter, s *aguiScope, ev runlet.Event, c *aguiCall) error {
	c.started = true
	e.callSub[c.id] = s.sub
	if s.turnMsg == "" {
		s.turnMsg = e.id()
	}
	start := aguiToolEvent{aguiBase: base("TOOL_CALL_START", ev), SubagentRunID: s.sub, ToolCallID: c.id, ToolCallName: c.name, ParentMessageID: s.turnMsg}
	if s.sub == "" && e.pageTools[c.name] {
		// The page runs it: the call names the run waiting for its result.
		start.Metadata = &aguiPageCallMeta{}
		start.Metadata.Runlet.RunID = ev.Header().RunID
	}
	err := w.data(start)
	if err != nil {
		return err
	}
	args := string(c.args)
	c.args = nil
	return e.toolArgs(w, s, ev, c.id, args)
}

func (e *aguiEncoder) toolArgs(w *frameWriter, s *aguiScope, ev runlet.Event, id, delta string) error {
	if delta == "" {
		return nil
	}
	return deltaEvent(w, "TOOL_CALL_ARGS", ev, s.sub, "toolCallId", id, delta)
}

// modelFinished closes the model call's messages and tool calls, sending
// whole what did not stream (a model that answered without deltas), and
// reports the call's usage and cost.
func (e *aguiEncoder) modelFinished(w *frameWriter, s *aguiScope, ev *runlet.ModelFinished) error {
	if isAgentCall(ev.Purpose) && ev.Response != nil {
		msg := ev.Response.Message
		if !s.sawReason {
			if err := e.reasoning(w, s, ev, msg.Reasoning()); err != nil {
				return err
			}
		}
		if !s.sawText {
			if err := e.text(w, s, ev, msg.Text()); err != nil {
				return err
			}
		}
		if err := e.closeMessages(w, s, ev); err != nil {
			return err
		}
		for _, call := range msg.ToolCalls() {
			i := slices.IndexFunc(s.calls, func(c *aguiCall) bool { return c.id == call.ID })
			if i < 0 {
				c := &aguiCall{index: -1, id: call.ID, name: call.Name, args: call.Arguments}
				s.calls = append(s.calls, c)
				if err := e.startCall(w, s, ev, c); err != nil {
					return err
				}
			}
		}
		if err := e.endCalls(w, s, ev); err != nil {
			return err
		}
		if err := e.citations(w, s, ev, msg); err != nil {
			return err
		}
	}
	return e.custom(w, s, ev, "runlet.usage", map[string]any{
		"agent": ev.Agent, "purpose": ev.Purpose, "model": modelOf(ev.Response),
		"usage": usageOf(ev.Response), "cost": ev.Cost,
	})
}

// citations sends the citations of the answer's text, for its first text
// message, as a CUSTOM "runlet.citations" event.
func (e *aguiEncoder) citations(w *frameWriter, s *aguiScope, ev runlet.Event, msg runlet.Message) error {
	var cs []runlet.Citation
	for _, p := range msg.Parts {
		if t, ok := p.(runlet.TextPart); ok {
			cs = append(cs, t.Citations...)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	id := s.turnMsg
	if len(s.texts) > 0 {
		id = s.texts[0]
	}
	return e.custom(w, s, ev, "runlet.citations", map[string]any{"messageId": id, "citations": aguiCitations(cs)})
}

func modelOf(r *runlet.ModelResponse) string {
	if r == nil {
		return ""
	}
	return r.Model
}

func usageOf(r *runlet.ModelResponse) runlet.Usage {
	if r == nil {
		return runlet.Usage{}
	}
	return r.Usage
}

// endCalls ends every started tool call of s not yet ended.
func (e *aguiEncoder) endCalls(w *frameWriter, s *aguiScope, ev runlet.Event) error {
	for _, c := range s.calls {
		if c.started && !c.ended {
			c.ended = true
			if err := w.data(aguiToolEvent{aguiBase: base("TOOL_CALL_END", ev), SubagentRunID: s.sub, ToolCallID: c.id}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *aguiEncoder) toolFinished(w *frameWriter, s *aguiScope, ev *runlet.ToolFinished) error {
	if err := e.closeMessages(w, s, ev); err != nil {
		return err
	}
	if s.sub == "" && e.pageTools[ev.Call.Name] && !ev.Result.IsError {
		// The page's own result of its tool: it has it already.
		return e.checkState(w, ev)
	}
	res := aguiToolResult{aguiBase: base("TOOL_CALL_RESULT", ev), SubagentRunID: s.sub, MessageID: e.id(),
		ToolCallID: ev.Call.ID, Content: aguiResultContent(ev.Result), Role: "tool"}
	if ev.Result.IsError || len(ev.Result.Structured) > 0 {
		res.Metadata = &aguiResultMeta{}
		res.Metadata.Runlet.IsError = ev.Result.IsError
		res.Metadata.Runlet.ErrorKind = string(ev.ErrorKind)
		if len(ev.Result.Structured) > 0 {
			res.Metadata.Runlet.Structured = jsonValue(ev.Result.Structured)
		}
	}
	if err := w.data(res); err != nil {
		return err
	}
	return e.checkState(w, ev)
}

// checkState sends what changed in the shared state, if any is shared.
func (e *aguiEncoder) checkState(w *frameWriter, ev runlet.Event) error {
	if e.state == nil {
		return nil
	}
	return e.state.check(w, ev)
}

func (e *aguiEncoder) custom(w *frameWriter, s *aguiScope, ev runlet.Event, name string, value any) error {
	return w.data(aguiCustom{aguiBase: base("CUSTOM", ev), SubagentRunID: s.sub, Name: name, Value: value})
}

// deltaEvent writes a TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT or
// TOOL_CALL_ARGS event, the stream's most frequent, built by hand rather
// than by encoding/json: {"type","timestamp","subagentRunId","<idKey>",
// "delta"}, what w.data writes for aguiMessageEvent and aguiToolEvent
// (TestAGUIDeltaFrames holds it to that).
func deltaEvent(w *frameWriter, typ string, ev runlet.Event, sub, idKey, id, delta string) error {
	if w.err != nil {
		return w.err
	}
	b := append(w.scratch[:0], `{"type":`...)
	b = wirejson.AppendString(b, typ)
	if t := ev.Header().Time; !t.IsZero() {
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, t.UnixMilli(), 10)
	}
	if sub != "" {
		b = append(b, `,"subagentRunId":`...)
		b = wirejson.AppendString(b, sub)
	}
	b = append(b, ',', '"')
	b = append(b, idKey...)
	b = append(b, `":`...)
	b = wirejson.AppendString(b, id)
	b = append(b, `,"delta":`...)
	b = wirejson.AppendString(b, delta)
	b = append(b, '}')
	w.scratch = b
	return w.raw("data: ", b)
}
