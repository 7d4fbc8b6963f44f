package runlet

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Guardrail is a check that runs beside an agent's work and can stop it
// before harm is done: on the run's input, the final answer, a tool call's
// arguments or its result. Like Hooks it is a struct of optional funcs;
// nil ones are skipped. Unlike a hook, a guardrail only judges: it returns
// a GuardrailVerdict, and the run allows, rejects or trips on it; every
// check is reported as a GuardrailChecked event.
//
// Where guardrails come from, and which run where:
//   - Agent.Guardrails are the agent's own. Its Input checks run when it
//     starts a run, as the run's agent or called as a tool (see AsTool), not
//     when a conversation is handed to it (see Handoff); its Output checks
//     run on its final answer, so after a handoff the last agent's apply;
//     its ToolCall and ToolResult checks run on its own tool calls.
//   - WithGuardrails on a Runtime or a run adds guardrails for the run as a
//     whole: Input and Output on the run's input and final answer, ToolCall
//     and ToolResult on every tool call of every agent of the run (agents
//     called as tools included), as the run's hooks do.
//
// A tripwire anywhere, an agent called as a tool included, ends the whole
// run with a *PolicyError (policy "guardrail:" + Name) wrapping a
// *GuardrailTripped.
//
// Resume runs the Runtime's and the agents' guardrails (a run's options
// are not given to Resume, as with hooks): tool checks on the calls that
// run after the decisions, and Output on the final answer; the input was
// checked before the interruption and is not checked again.
//
// A check may call models through CallModel with its own purpose: the call
// counts in the run's usage, limits and cost (Result.UsageByPurpose) and
// is reported as ModelStarted and ModelFinished (with Check set). Checks
// run concurrently: with each other, Input checks with the first model
// call, tool checks on each call's worker. A check must be safe for that
// and return once its context is cancelled (a tripwire elsewhere, the
// run's end, its Timeout): the run waits for it.
//
// Durable runs of the temporal/ module run each check in an activity (see
// its package doc, "Guardrails"): keep a check's state out of its closure
// (look it up by Name), since it runs in whichever worker runs the
// activity.
type Guardrail struct {
	// Name identifies the guardrail in events, errors and policies.
	Name string
	// Input checks the input of a run before or while the first model call
	// runs (see Blocking). Reject counts as a trip here.
	Input func(ctx context.Context, in GuardrailInput) (GuardrailVerdict, error)
	// Output checks the final answer before the run returns it. Reject
	// counts as a trip here.
	Output func(ctx context.Context, out GuardrailOutput) (GuardrailVerdict, error)
	// ToolCall checks a call's arguments (validated against the tool's
	// schema) before the tool runs: Reject answers the call with an
	// is-error result carrying the verdict's Message instead of running it.
	// It runs after the BeforeToolCall hooks and any approval (on Resume,
	// for an approved call), on the call's worker, so the calls of a turn
	// are checked concurrently. Calls a hook answered, calls that failed
	// validation and handoffs are not checked: no tool runs for them.
	ToolCall func(ctx context.Context, call ToolCallPart) (GuardrailVerdict, error)
	// ToolResult checks a call's result before the model sees it: Reject
	// replaces it with an is-error result carrying the verdict's Message.
	ToolResult func(ctx context.Context, call ToolCallPart, result ToolResultPart) (GuardrailVerdict, error)
	// Blocking runs Input before the first model call instead of beside
	// it: no tokens are spent on an input it trips on, at the cost of its
	// latency. By default Input runs concurrently with the first model
	// call, and a tripwire cancels that call at once.
	Blocking bool
	// Timeout bounds each check; zero means only the run's context does.
	// A check that times out has failed (see OnError).
	Timeout time.Duration
	// OnError says what the check's own failure (an error, a panic, a
	// timeout) does: FailClosed, the default, ends the run as tripped;
	// FailOpen lets the input, answer or call pass.
	OnError GuardrailFailure
}

// GuardrailFailure is what a guardrail's own failure does to the run.
type GuardrailFailure int

const (
	// FailClosed ends the run as if the guardrail tripped: the
	// *GuardrailTripped carries the failure in Err.
	FailClosed GuardrailFailure = iota
	// FailOpen lets what was checked pass; the GuardrailChecked event
	// still reports the failure.
	FailOpen
)

// GuardrailAction is what a guardrail decided.
type GuardrailAction string

// The guardrail actions. The zero GuardrailVerdict passes.
const (
	GuardrailPass   GuardrailAction = "pass"
	GuardrailReject GuardrailAction = "reject"
	GuardrailTrip   GuardrailAction = "trip"
)

// GuardrailVerdict is a guardrail's decision. The zero value passes.
type GuardrailVerdict struct {
	// Action is GuardrailPass (or empty), GuardrailReject or GuardrailTrip.
	Action GuardrailAction
	// Message says why: for Reject, the is-error result the model sees;
	// for Trip, the reason in the error and the event.
	Message string
	// Info is what the guardrail wants to report with a trip or a reject,
	// such as a classifier's label and score: it goes into the
	// GuardrailChecked event (as JSON) and the *GuardrailTripped. Never put
	// the secret or personal data it found here, only what kind it was.
	Info any
}

// Tripwire returns a verdict that ends the run.
func Tripwire(message string, info any) GuardrailVerdict {
	return GuardrailVerdict{Action: GuardrailTrip, Message: message, Info: info}
}

// RejectCall returns a verdict that answers a tool call with an is-error
// result saying message, so that the model can do something else.
func RejectCall(message string) GuardrailVerdict {
	return GuardrailVerdict{Action: GuardrailReject, Message: message}
}

// GuardrailInput is what an Input check sees.
type GuardrailInput struct {
	// Agent names the agent about to answer.
	Agent string
	// Input is the run's input: its text input as a user message, then
	// WithInput's messages (for an agent called as a tool, the input its
	// caller gave it).
	Input []Message
	// History is the conversation before the input (the session's and
	// WithHistory's messages).
	History []Message
}

// Text returns the text of the input's messages, one per line.
func (in GuardrailInput) Text() string {
	var b []byte
	for i, m := range in.Input {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, m.Text()...)
	}
	return string(b)
}

// GuardrailOutput is what an Output check sees.
type GuardrailOutput struct {
	// Agent names the agent that answered.
	Agent string
	// Text is the final answer's text: with an output schema, its JSON.
	Text string
	// Value is, for RunAs and ResumeAs, the answer decoded: a *T. It is nil
	// for other runs.
	Value any
	// Messages are what the run added, the answer last.
	Messages []Message
}

// GuardrailStage says what a guardrail checked.
type GuardrailStage string

// The guardrail stages.
const (
	GuardInput      GuardrailStage = "input"
	GuardOutput     GuardrailStage = "output"
	GuardToolCall   GuardrailStage = "tool_call"
	GuardToolResult GuardrailStage = "tool_result"
)

// ErrGuardrailTripped is matched by every *GuardrailTripped.
var ErrGuardrailTripped = errors.New("runlet: guardrail tripped")

// GuardrailTripped is why a guardrail ended a run: it tripped, or it
// failed and fails closed (Err). A run returns it wrapped in a
// *PolicyError whose Policy is "guardrail:" + Guardrail.
type GuardrailTripped struct {
	Guardrail string
	Stage     GuardrailStage
	Agent     string
	CallID    string // the tool call, for the tool stages
	Message   string // the verdict's
	Info      any    // the verdict's
	Err       error  // the guardrail's own failure, when it failed closed
}

func (e *GuardrailTripped) Error() string {
	s := fmt.Sprintf("runlet: guardrail %q tripped on %s", e.Guardrail, e.Stage)
	if e.Err != nil {
		return s + ": the guardrail failed: " + e.Err.Error()
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is makes every GuardrailTripped match ErrGuardrailTripped.
func (e *GuardrailTripped) Is(target error) bool { return target == ErrGuardrailTripped }

// Unwrap returns the guardrail's own failure, if it failed.
func (e *GuardrailTripped) Unwrap() error { return e.Err }

// WithGuardrails adds guardrails for the whole run (see Guardrail): on a
// Runtime for every run, on a run after the Runtime's.
func WithGuardrails(g ...Guardrail) SharedOption {
	return sharedOption(func(s *scope) { s.guardrails = append(s.guardrails, g...) })
}

// WithHeldOutput makes a Stream hold the answer's text deltas (TextDelta,
// OutputPartial) of each model call back until the guardrails on it
// passed: the Input checks of the first call and, for the final answer,
// the Output checks. A tripwire then ends the run with nothing of the
// answer shown. Text of a response that calls tools is released when the
// response ends. Without it, the default, deltas stream as they come, and
// a tripwire after some reached the consumer is followed by an
// OutputWithdrawn event: the consumer takes back what it showed of that
// call. Only the run's own agent holds; agents called as tools stream.
func WithHeldOutput() RunOption {
	return runOption(func(c *runConfig) { c.heldOutput = true })
}
