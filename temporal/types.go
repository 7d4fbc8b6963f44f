package temporal

import (
	"time"

	"github.com/runlet/runlet"
)

// RunInput is the workflow's input: data only, so it can be stored in the
// workflow's history. Agent names an agent registered on the worker.
type RunInput struct {
	// Agent is the registered agent's name; required.
	Agent string `json:"agent"`
	// Model, when set, names a model of Config.Models to use instead of
	// the agent's.
	Model string `json:"model,omitempty"`
	// Input is the user's message; Messages are more input messages
	// (multimodal parts, say) after it.
	Input    string           `json:"input,omitempty"`
	Messages []runlet.Message `json:"messages,omitempty"`
	// History comes before the input (after the session's history).
	History []runlet.Message `json:"history,omitempty"`
	// SessionID continues a session of Config.Sessions: its history is
	// loaded first, and every completed turn is appended to it.
	SessionID string `json:"session_id,omitempty"`
	// RunID labels events and the Result; default: the workflow ID.
	RunID string `json:"run_id,omitempty"`
	// Settings and Options override the agent's, as runlet.WithSettings
	// and runlet.WithOptions do.
	Settings runlet.Settings `json:"settings,omitzero"`
	Options  map[string]any  `json:"options,omitempty"`
	// MaxTurns bounds model calls (default: the agent's, else
	// 20, as in Runlet); Limits bound usage.
	MaxTurns int                `json:"max_turns,omitempty"`
	Limits   runlet.UsageLimits `json:"limits,omitzero"`
	// ApprovalTimeout bounds the wait for decisions on calls that need
	// approval (default: no bound; a run may wait for days). When it
	// passes, the run fails with policy "approval_timeout".
	ApprovalTimeout time.Duration `json:"approval_timeout,omitempty"`
	// ToolConcurrency bounds the tool activities of one turn that are
	// outstanding at once (default 8, as in Runlet): a turn of many calls
	// schedules the next as one finishes, whatever the model asked for.
	ToolConcurrency int `json:"tool_concurrency,omitempty"`
	// Output asks for a final answer matching it, as
	// runlet.WithOutputSchema does (default: the agent's OutputSchema);
	// StartAs sets it from T. OutputRetries is how many times one model
	// call's invalid answer goes back to the model with what is wrong
	// with it (0: 2, as in Runlet; negative: never). See the package doc,
	// "Typed output".
	Output        *runlet.OutputSchema `json:"output,omitempty"`
	OutputRetries int                  `json:"output_retries,omitempty"`
}

// Progress is what ProgressQuery returns: the run so far.
type Progress struct {
	RunID string          `json:"run_id"`
	Agent string          `json:"agent"`
	State runlet.RunState `json:"state"`
	// Turn counts model calls so far; ToolCalls the tool calls executed.
	Turn      int          `json:"turn"`
	ToolCalls int          `json:"tool_calls"`
	Usage     runlet.Usage `json:"usage"`
	// Pending lists the calls waiting for a decision.
	Pending []runlet.ToolCallPart `json:"pending,omitempty"`
	// Messages counts the messages the run added so far.
	Messages int `json:"messages"`
}

// ModelInput is the model activity's input: one model call of a run.
type ModelInput struct {
	Agent     string           `json:"agent"`
	Model     string           `json:"model,omitempty"`
	RunID     string           `json:"run_id"`
	SessionID string           `json:"session_id,omitempty"`
	Turn      int              `json:"turn"`
	Messages  []runlet.Message `json:"messages"`
	Settings  runlet.Settings  `json:"settings,omitzero"`
	Options   map[string]any   `json:"options,omitempty"`
	// ToolsCalled says the run has called tools, so a forced tool choice
	// of the agent gives way to auto (see runlet.Agent.ToolChoice).
	ToolsCalled bool `json:"tools_called,omitempty"`
	// Base, with a payload store, names the stored transcript Messages
	// follow (see Config.Payloads); Refs name the parts of Messages kept
	// in the store.
	Base *Ref      `json:"base,omitempty"`
	Refs []PartRef `json:"refs,omitempty"`
	// Output and OutputRetries are RunInput's.
	Output        *runlet.OutputSchema `json:"output,omitempty"`
	OutputRetries int                  `json:"output_retries,omitempty"`
}

// ModelOutput is the model activity's result: the assistant's message and
// the usage of the call, with the calls the preparers made.
type ModelOutput struct {
	// Before are the messages the call added before Message: with an
	// output schema, the answers that failed it and what the model was
	// told about each, and the responses of a turn the model paused and
	// the call continued.
	Before       []runlet.Message    `json:"before,omitempty"`
	Message      runlet.Message      `json:"message"`
	FinishReason runlet.FinishReason `json:"finish_reason,omitempty"`
	// Turns counts the model calls of the agent the call made: one, and
	// one more for each repair of an answer or continuation of a paused
	// turn.
	Turns          int                     `json:"turns,omitempty"`
	Usage          runlet.Usage            `json:"usage"`
	UsageByPurpose map[string]runlet.Usage `json:"usage_by_purpose,omitempty"`
	// Transcript, with a payload store, names the stored transcript of
	// the call's request: the next call's Base.
	Transcript *Ref `json:"transcript,omitempty"`
}

// ToolInput is the tool activity's input: one call of a turn.
type ToolInput struct {
	Agent     string              `json:"agent"`
	RunID     string              `json:"run_id"`
	SessionID string              `json:"session_id,omitempty"`
	Turn      int                 `json:"turn"`
	Call      runlet.ToolCallPart `json:"call"`
	// Approved is set when a human approved the call.
	Approved bool `json:"approved,omitempty"`
}

// ToolOutput is the tool activity's result. Pending means the call waits
// for a decision and did not run.
type ToolOutput struct {
	Result    runlet.ToolResultPart `json:"result"`
	ErrorKind runlet.ToolErrorKind  `json:"error_kind,omitempty"`
	Pending   bool                  `json:"pending,omitempty"`
	// Ref, with a payload store, says the result was larger than
	// Config.InlineLimit and is kept in the store: Result is its stand-in.
	Ref *Ref `json:"ref,omitempty"`
}

// Error types of the ApplicationErrors the workflow and its activities
// fail with (temporal.ApplicationError.Type). They are never retried.
const (
	// ErrTypePolicy: a policy stopped the run (max turns, a usage limit, a
	// hook, ...); Wait turns it into a *runlet.PolicyError.
	ErrTypePolicy = "runlet.PolicyError"
	// ErrTypeProvider: the provider refused the request for good; a
	// retryable provider error is retried under the activity's policy.
	ErrTypeProvider = "runlet.ProviderError"
	// ErrTypeUnknownAgent: the input names no registered agent or model.
	ErrTypeUnknownAgent = "runlet.UnknownAgent"
	// ErrTypeRun: any other failure of the run (a bad agent, a store error).
	ErrTypeRun = "runlet.RunError"
	// ErrTypeOutput: the answer still failed the output schema after the
	// last repair; Wait turns it into a *runlet.OutputError.
	ErrTypeOutput = "runlet.OutputError"
	// ErrTypeRefusal: the model refused to give a structured answer; Wait
	// turns it into a *runlet.RefusalError.
	ErrTypeRefusal = "runlet.RefusalError"
)

// failureDetails rides on the workflow's ApplicationError so that Wait can
// return the partial Result with the error.
type failureDetails struct {
	Policy string         `json:"policy,omitempty"`
	Result *runlet.Result `json:"result,omitempty"`
	Refs   []PartRef      `json:"refs,omitempty"` // of Result.Messages
	// Output and Refusal say why a run with an output schema failed.
	Output  *runlet.OutputError `json:"output_error,omitempty"`
	Refusal string              `json:"refusal,omitempty"`
}

// workflowResult is what the workflow returns: a runlet.Result (its JSON
// is the Result's, with one more field) and, with a payload store, the
// parts of its Messages kept in the store, which Wait reads back.
type workflowResult struct {
	runlet.Result
	Refs []PartRef `json:"payload_refs,omitempty"`
}
