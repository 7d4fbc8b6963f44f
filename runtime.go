package runlet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"iter"
	"log/slog"
)

// Defaults used when the Runtime has no option for them; the options'
// docs give their values.
const (
	defaultMaxTurns        = 20
	defaultToolConcurrency = 8
	defaultMaxToolOutput   = 64 << 10 // bytes
	// what a tool's images, files and audio may hold when no cap is set
	// (WithMaxToolOutput): 20 MiB, the most an inline request part may
	// carry at Gemini, the smallest of the providers' request bounds
	defaultMaxToolMedia = 20 << 20
)

// Runtime runs agents. It holds what is shared by runs: observers, hooks,
// preparers, stores and limits. A Runtime is safe for concurrent runs, and
// NewRuntime() with no options is ready to use. Sessions need a store:
// without WithStore a Runtime keeps checkpoints and state in its own memory
// but has no session store, and a run WithSession fails.
type Runtime struct {
	scope           // observers, hooks, preparers, limits: defaults for every run
	sessions        SessionStore
	state           StateStore
	checkpoints     CheckpointStore
	toolConcurrency int
	logger          *slog.Logger
	checkpointKeys  *checkpointKeys // WithCheckpointKey's; nil without
}

// UsageLimits bound one run. Zero fields are unlimited. ToolCalls is
// checked before a turn's calls run: a turn whose calls would pass it fails
// the run with none of them run, so it also caps what one response of the
// model can ask for.
type UsageLimits struct {
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	TotalTokens  int `json:"total_tokens,omitempty"`
	Requests     int `json:"requests,omitempty"`   // model calls
	ToolCalls    int `json:"tool_calls,omitempty"` // tool calls executed
}

// NewRuntime returns a Runtime configured by opts.
func NewRuntime(opts ...RuntimeOption) *Runtime {
	rt := &Runtime{}
	for _, o := range opts {
		o.applyRuntime(rt)
	}
	if rt.state == nil || rt.checkpoints == nil {
		mem := NewMemoryStore()
		if rt.state == nil {
			rt.state = mem
		}
		if rt.checkpoints == nil {
			rt.checkpoints = mem
		}
	}
	if rt.maxTurns <= 0 {
		rt.maxTurns = defaultMaxTurns
	}
	if rt.toolConcurrency <= 0 {
		rt.toolConcurrency = defaultToolConcurrency
	}
	if rt.logger == nil {
		rt.logger = slog.Default()
	}
	return rt
}

// Run runs agent on input until a final answer, an interruption or a
// failure. It is Stream drained, without text deltas: it calls the model's
// Generate rather than Stream. On failure it returns the error and a non-nil
// partial Result; an interrupted run returns a Result with
// StateInterrupted and a nil error.
func (rt *Runtime) Run(ctx context.Context, agent *Agent, input string, opts ...RunOption) (*Result, error) {
	r := rt.newRun(agent, input, opts, nil)
	r.start(ctx)
	return r.result, r.err
}

// Stream runs agent on input and yields every event as it happens, ending
// with exactly one terminal event: *RunFinished, *RunInterrupted, or
// *RunFailed (yielded together with the error). The run starts when the
// caller ranges; breaking out of the loop cancels it — the model stream is
// closed, running tools see their context cancelled — and returns only
// after everything it started has stopped (a tool that ignores its context
// is abandoned after a grace period of 100 ms; see WithToolTimeout).
func (rt *Runtime) Stream(ctx context.Context, agent *Agent, input string, opts ...RunOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := rt.newRun(agent, input, opts, yield)
		r.start(ctx)
	}
}

// Resume continues an interrupted run from its checkpoint, possibly in
// another process, with one decision per pending call. The checkpoint is
// claimed atomically: resuming twice fails with ErrNotFound, and decisions
// that do not match the pending calls fail without consuming it. The run
// keeps its settings, options, limits and counts (see Checkpoint); the
// observers, hooks and preparers are the resuming Runtime's, since the run
// options that added some are functions a checkpoint cannot hold.
//
// A checkpoint is input: whoever can write the store can change it.
// Resume checks it before acting on it (see Checkpoint for what it must
// hold) and refuses one that is malformed or inconsistent with the turn it
// interrupted with a *CheckpointError (ErrInvalidCheckpoint), before any
// tool runs and without consuming it. Whatever the checkpoint says, a call
// that needs approval (WithApproval, or a BeforeToolCall hook returning
// ErrApprovalRequired) runs only with an approving Decision for it from
// the caller: a checkpoint cannot approve anything. With WithCheckpointKey
// it also detects any change made to the checkpoint outside the program.
func (rt *Runtime) Resume(ctx context.Context, agent *Agent, runID string, decisions ...Decision) (*Result, error) {
	r := rt.resumeRun(agent, runID, decisions, nil)
	r.start(ctx)
	return r.result, r.err
}

// ResumeStream is Resume as a stream of events, like Stream.
func (rt *Runtime) ResumeStream(ctx context.Context, agent *Agent, runID string, decisions ...Decision) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := rt.resumeRun(agent, runID, decisions, yield)
		r.start(ctx)
	}
}

func newRunID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "run_" + hex.EncodeToString(b[:])
}
