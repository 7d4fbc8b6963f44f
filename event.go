package runlet

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"
)

// Event is something the runtime did. The set is sealed; switch on the
// concrete types (*TextDelta, *ToolFinished, *RunFinished, ...). Every event
// marshals to JSON with its stable type name, such as "text.delta", in the
// "type" key (EventHeader.Type), and UnmarshalEvent reads it back.
type Event interface {
	// Header returns the fields every event has.
	Header() *EventHeader
	eventType() string // seals the set; the stable type name
}

// EventHeader is embedded in every event. The runtime stamps it when it
// emits the event.
type EventHeader struct {
	Type  string    `json:"type"` // "run.started", "text.delta", ...
	RunID string    `json:"run_id"`
	Seq   int64     `json:"seq"` // 1, 2, 3, ... within a run, in delivery order
	Time  time.Time `json:"time"`
	Agent string    `json:"agent,omitempty"`
	Turn  int       `json:"turn"` // model call number, from 1; 0 before the first
	// Depth is 0 for the run's own agent, 1 for an agent it called as a
	// tool (see Agent.AsTool), 2 for one that agent called, and so on.
	Depth int `json:"depth,omitempty"`
	// CallPath places an event of an agent called as a tool: the IDs of
	// the tool calls that led to it, outermost first, joined by "/"; empty
	// at depth 0. Such an event belongs under the ToolStarted, at Depth-1,
	// whose Call.ID ends the path, which is how a consumer draws the tree.
	CallPath string `json:"call_path,omitempty"`
}

// Header returns h; it makes every event satisfy Event.Header.
func (h *EventHeader) Header() *EventHeader { return h }

// RunState is where a run is: a state of the run's state machine
// (StateChanged) and, once it ended, how it ended (Result.Status).
type RunState string

// The run states. A run goes Idle → Thinking (model call) → Acting (tools)
// → Observing (results appended) → Thinking … and ends in Finished,
// Interrupted or Failed, the three a Result's Status can hold.
const (
	StateIdle        RunState = "idle"
	StateThinking    RunState = "thinking"
	StateActing      RunState = "acting"
	StateObserving   RunState = "observing"
	StateFinished    RunState = "finished"
	StateInterrupted RunState = "interrupted"
	StateFailed      RunState = "failed"
)

// RunStarted is the first event of a run.
type RunStarted struct {
	EventHeader
	SessionID string    `json:"session_id,omitempty"`
	Input     []Message `json:"input"`
}

// RunResumed is the first event of a resumed run.
type RunResumed struct {
	EventHeader
	SessionID string     `json:"session_id,omitempty"`
	Decisions []Decision `json:"decisions"`
}

// StateChanged marks a transition of the state machine.
type StateChanged struct {
	EventHeader
	From RunState `json:"from"`
	To   RunState `json:"to"`
}

// ContextPrepared reports what the preparers did to the request.
type ContextPrepared struct {
	EventHeader
	Changed         bool     `json:"changed"`
	MessagesBefore  int      `json:"messages_before"`
	MessagesAfter   int      `json:"messages_after"`
	EstimatedTokens int      `json:"estimated_tokens,omitempty"`
	Notes           []string `json:"notes,omitempty"` // one line per change, such as "dropped 2 oldest turns"
}

// ModelStarted carries the request exactly as it goes to the model, after
// preparers and hooks. Purpose is PurposeAgent for the agent's turn, or what
// a preparer's call is for (see CallModel).
//
// Check names the guardrail check that made the call, if one did (see
// Guardrail): the guardrail's name, the stage and, for a tool stage, the
// call's ID, joined by "/". Checks run concurrently with the agent's model
// call and with each other, never two of the same Check at once: Purpose
// and Check pair a ModelStarted with its ModelFinished.
type ModelStarted struct {
	EventHeader
	Purpose string        `json:"purpose,omitempty"`
	Check   string        `json:"check,omitempty"`
	Request *ModelRequest `json:"request"`
}

// TextDelta is a fragment of the model's answer text.
type TextDelta struct {
	EventHeader
	Delta string `json:"delta"`
}

// ReasoningDelta is a fragment of the model's reasoning.
type ReasoningDelta struct {
	EventHeader
	Delta string `json:"delta"`
}

// ToolCallDelta is a fragment of a tool call as the model streams it.
type ToolCallDelta struct {
	EventHeader
	Index int    `json:"index"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Delta string `json:"delta,omitempty"`
}

// ModelFinished carries the model's complete response; Purpose and Check
// are as in ModelStarted. Cost is the call's, from the run's price table (see
// WithPrices): unpriced when the table has no price for Response.Model.
type ModelFinished struct {
	EventHeader
	Purpose  string         `json:"purpose,omitempty"`
	Check    string         `json:"check,omitempty"`
	Response *ModelResponse `json:"response"`
	Cost     Cost           `json:"cost"`
	Duration time.Duration  `json:"duration_ns"`
}

// HostedToolFinished shows what a provider-hosted tool (see HostedTool)
// did during the model call just finished: one event per HostedToolPart
// of the response, after ModelFinished.
type HostedToolFinished struct {
	EventHeader
	Part HostedToolPart `json:"part"`
}

// ToolStarted says a tool call is about to run.
type ToolStarted struct {
	EventHeader
	Call ToolCallPart `json:"call"`
}

// ToolFinished carries a tool call's result. ErrorKind is set when the
// result is an error (unknown tool, invalid arguments, panic, ...).
type ToolFinished struct {
	EventHeader
	Call      ToolCallPart   `json:"call"`
	Result    ToolResultPart `json:"result"`
	ErrorKind ToolErrorKind  `json:"error_kind,omitempty"`
	Duration  time.Duration  `json:"duration_ns"`
}

// RunInterrupted ends a run that waits for human decisions on Pending.
type RunInterrupted struct {
	EventHeader
	Pending []ToolCallPart `json:"pending"`
	Result  *Result        `json:"result"`
}

// RunFinished ends a completed run.
type RunFinished struct {
	EventHeader
	Result *Result `json:"result"`
}

// RunFailed ends a failed run. Policy names the policy that stopped it
// ("max_turns", "usage_limit:total_tokens", "hook:BeforeModelCall", ...),
// empty for other failures. ErrorType classifies the error in a few words
// fit for metrics: the policy, "canceled", "timeout", the provider's HTTP
// status ("429") or error code, "stream_incomplete", or "error".
type RunFailed struct {
	EventHeader
	Error     string  `json:"error"`
	ErrorType string  `json:"error_type"`
	Policy    string  `json:"policy,omitempty"`
	Result    *Result `json:"result"`
}

// AgentStarted is the first event of an agent called as a tool, in place
// of RunStarted (which only the run's own agent sends); its header names
// the agent, its Depth and CallPath. Resumed is set when the agent goes on
// after an interruption.
type AgentStarted struct {
	EventHeader
	Input   []Message `json:"input,omitempty"`
	Resumed bool      `json:"resumed,omitempty"`
}

// AgentFinished is the last event of an agent called as a tool, in place of
// RunFinished, RunInterrupted or RunFailed: the run goes on. Status says
// how it ended; Error, ErrorType and Policy are set when it failed (the
// calling agent sees the failure as the tool's error result); Result's
// Usage is the agent's own.
type AgentFinished struct {
	EventHeader
	Status    RunState `json:"status"`
	Error     string   `json:"error,omitempty"`
	ErrorType string   `json:"error_type,omitempty"`
	Policy    string   `json:"policy,omitempty"`
	Result    *Result  `json:"result"`
}

// HandoffOccurred marks a handoff: from this event on, the agent To
// answers in place of From (see Handoff).
type HandoffOccurred struct {
	EventHeader
	From string `json:"from"`
	To   string `json:"to"`
}

// GuardrailChecked reports one guardrail check (see Guardrail): the
// guardrail, what it checked (Stage; CallID for a tool call), what it
// decided (Action: "pass", "reject" or "trip", a trip being the run's
// tripwire), its Message and Info, and Error when the check itself failed
// (then Action is what its failure policy made of it). A tripwire's event
// is the last of its agent's events but for OutputWithdrawn and the run's
// end: no delta follows it.
type GuardrailChecked struct {
	EventHeader
	Guardrail string          `json:"guardrail"`
	Stage     GuardrailStage  `json:"stage"`
	CallID    string          `json:"call_id,omitempty"`
	Action    GuardrailAction `json:"action"`
	Message   string          `json:"message,omitempty"`
	Info      json.RawMessage `json:"info,omitempty"`
	Error     string          `json:"error,omitempty"`
	Duration  time.Duration   `json:"duration_ns"`
}

// OutputWithdrawn tells a Stream consumer to take back the answer text it
// showed of the agent's current model call (the TextDelta and
// OutputPartial events since its ModelStarted): a guardrail tripped on the
// answer or on the input it answers. It comes after the tripwire's
// GuardrailChecked and before the run's end. With WithHeldOutput nothing
// was shown and it is not sent.
type OutputWithdrawn struct {
	EventHeader
	Guardrail string         `json:"guardrail"`
	Stage     GuardrailStage `json:"stage"`
}

func (*HandoffOccurred) eventType() string    { return "handoff" }
func (*GuardrailChecked) eventType() string   { return "guardrail.checked" }
func (*OutputWithdrawn) eventType() string    { return "output.withdrawn" }
func (*AgentStarted) eventType() string       { return "agent.started" }
func (*AgentFinished) eventType() string      { return "agent.finished" }
func (*RunStarted) eventType() string         { return "run.started" }
func (*RunResumed) eventType() string         { return "run.resumed" }
func (*StateChanged) eventType() string       { return "state.changed" }
func (*ContextPrepared) eventType() string    { return "context.prepared" }
func (*ModelStarted) eventType() string       { return "model.started" }
func (*TextDelta) eventType() string          { return "text.delta" }
func (*ReasoningDelta) eventType() string     { return "reasoning.delta" }
func (*ToolCallDelta) eventType() string      { return "tool_call.delta" }
func (*ModelFinished) eventType() string      { return "model.finished" }
func (*ToolStarted) eventType() string        { return "tool.started" }
func (*HostedToolFinished) eventType() string { return "hosted_tool.finished" }
func (*ToolFinished) eventType() string       { return "tool.finished" }
func (*RunInterrupted) eventType() string     { return "run.interrupted" }
func (*RunFinished) eventType() string        { return "run.finished" }
func (*RunFailed) eventType() string          { return "run.failed" }

// events lists one value of every event type; UnmarshalEvent finds a type
// by its name here, so a new event type is added to this list and nowhere
// else in the decoding.
var events = []Event{
	new(RunStarted), new(RunResumed), new(AgentStarted), new(AgentFinished),
	new(StateChanged), new(ContextPrepared), new(ModelStarted), new(TextDelta),
	new(ReasoningDelta), new(ToolCallDelta), new(ModelFinished), new(ToolStarted),
	new(ToolFinished), new(RunInterrupted), new(RunFinished), new(RunFailed),
	new(OutputPartial), new(OutputChecked), new(HandoffOccurred),
	new(GuardrailChecked), new(OutputWithdrawn), new(HostedToolFinished),
}

// eventTypes maps each event type name to its Go type.
var eventTypes = func() map[string]reflect.Type {
	m := make(map[string]reflect.Type, len(events))
	for _, ev := range events {
		m[ev.eventType()] = reflect.TypeOf(ev).Elem()
	}
	return m
}()

// UnmarshalEvent decodes an event written by json.Marshal (a JSONL line).
func UnmarshalEvent(data []byte) (Event, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	t, ok := eventTypes[head.Type]
	if !ok {
		return nil, fmt.Errorf("runlet: unknown event type %q", head.Type)
	}
	ev := reflect.New(t).Interface().(Event)
	if err := json.Unmarshal(data, ev); err != nil {
		return nil, err
	}
	return ev, nil
}
