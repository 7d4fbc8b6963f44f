package runlet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"iter"
	"log/slog"
	"maps"
	"time"
)

// Defaults used when the Runtime has no option for them.
const (
	DefaultMaxTurns        = 20
	DefaultToolConcurrency = 8
	DefaultMaxToolOutput   = 64 << 10 // bytes
)

// Runtime runs agents. It holds what is shared by runs: observers, hooks,
// preparers, stores and limits. A Runtime is safe for concurrent runs, and
// NewRuntime() with no options is ready to use. Sessions need a store:
// without WithStore a Runtime keeps checkpoints and state in its own memory
// but has no session store, and a run WithSession fails.
type Runtime struct {
	observers       []Observer
	hooks           []Hooks
	preparers       []Preparer
	sessions        SessionStore
	state           StateStore
	checkpoints     CheckpointStore
	maxTurns        int
	limits          UsageLimits
	toolConcurrency int
	toolTimeout     time.Duration
	maxToolOutput   int
	logger          *slog.Logger
}

// UsageLimits bound one run. Zero fields are unlimited.
type UsageLimits struct {
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	TotalTokens  int `json:"total_tokens,omitempty"`
	Requests     int `json:"requests,omitempty"`   // model calls
	ToolCalls    int `json:"tool_calls,omitempty"` // tool calls executed
}

// Option configures a Runtime.
type Option func(*Runtime)

// WithObserver adds observers; they see every event, in order.
func WithObserver(o ...Observer) Option {
	return func(rt *Runtime) { rt.observers = append(rt.observers, o...) }
}

// WithHooks adds hook sets; several compose in the order given.
func WithHooks(h ...Hooks) Option {
	return func(rt *Runtime) { rt.hooks = append(rt.hooks, h...) }
}

// WithPreparer adds context preparers, run in order before every model call.
func WithPreparer(p ...Preparer) Option {
	return func(rt *Runtime) { rt.preparers = append(rt.preparers, p...) }
}

// WithStore sets the session, state and checkpoint store:
// NewMemoryStore() for one process, store/sqlite or store/postgres to keep
// sessions across processes. Without a session store (WithStore or
// WithSessionStore), a run WithSession fails before any model call, rather
// than start a session that nothing keeps.
func WithStore(s Store) Option {
	return func(rt *Runtime) { rt.sessions, rt.state, rt.checkpoints = s, s, s }
}

// WithSessionStore sets only the session history store.
func WithSessionStore(s SessionStore) Option { return func(rt *Runtime) { rt.sessions = s } }

// WithStateStore sets only the key-value state store.
func WithStateStore(s StateStore) Option { return func(rt *Runtime) { rt.state = s } }

// WithCheckpointStore sets only the checkpoint store.
func WithCheckpointStore(s CheckpointStore) Option { return func(rt *Runtime) { rt.checkpoints = s } }

// WithMaxTurns sets the default bound on model calls per run
// (DefaultMaxTurns if unset). Agent.MaxTurns takes precedence.
func WithMaxTurns(n int) Option { return func(rt *Runtime) { rt.maxTurns = n } }

// WithLimits sets usage limits for every run.
func WithLimits(l UsageLimits) Option { return func(rt *Runtime) { rt.limits = l } }

// WithToolConcurrency bounds how many tool calls of one turn run at once
// (DefaultToolConcurrency if unset; 1 runs them one by one).
func WithToolConcurrency(n int) Option { return func(rt *Runtime) { rt.toolConcurrency = n } }

// WithToolTimeout bounds every tool call that has no timeout of its own. A
// timed-out call becomes an is-error result; the tool's context is
// cancelled, and a tool that does not return within 100 ms of that is
// abandoned (its goroutine ends whenever the tool does).
func WithToolTimeout(d time.Duration) Option { return func(rt *Runtime) { rt.toolTimeout = d } }

// WithMaxToolOutput sets the size in bytes above which a tool's output is
// truncated with a marker (DefaultMaxToolOutput if unset; negative: never).
func WithMaxToolOutput(n int) Option { return func(rt *Runtime) { rt.maxToolOutput = n } }

// WithLogger sets where the runtime reports its own problems, such as a
// panicking observer (slog.Default() if unset).
func WithLogger(l *slog.Logger) Option { return func(rt *Runtime) { rt.logger = l } }

// NewRuntime returns a Runtime configured by opts.
func NewRuntime(opts ...Option) *Runtime {
	rt := &Runtime{}
	for _, o := range opts {
		o(rt)
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
		rt.maxTurns = DefaultMaxTurns
	}
	if rt.toolConcurrency <= 0 {
		rt.toolConcurrency = DefaultToolConcurrency
	}
	if rt.maxToolOutput == 0 {
		rt.maxToolOutput = DefaultMaxToolOutput
	}
	if rt.logger == nil {
		rt.logger = slog.Default()
	}
	return rt
}

// RunOption configures one run.
type RunOption func(*runConfig)

type runConfig struct {
	sessionID string
	history   []Message
	input     []Message
	runID     string
	options   map[string]any
	settings  Settings
	limits    *UsageLimits
	output    outputConfig
}

// WithSession runs in a session: history is loaded from the session store
// first, and each completed turn is appended to it. A failed or cancelled
// run leaves only complete turns (never a tool call without its result).
// The Runtime needs a session store (see WithStore); without one the run
// fails before calling the model, with an error wrapping ErrNoSession.
func WithSession(id string) RunOption { return func(c *runConfig) { c.sessionID = id } }

// WithHistory sets the messages that precede the input, instead of (or in
// front of) a session's history.
func WithHistory(msgs ...Message) RunOption {
	return func(c *runConfig) { c.history = append(c.history, msgs...) }
}

// WithInput adds input messages after the input string (if any): images,
// files, several parts, or any prepared message.
func WithInput(msgs ...Message) RunOption {
	return func(c *runConfig) { c.input = append(c.input, msgs...) }
}

// WithRunID sets the run ID (a random ID otherwise).
func WithRunID(id string) RunOption { return func(c *runConfig) { c.runID = id } }

// WithOptions sets provider-specific request options for this run; they
// override the agent's Options key by key.
func WithOptions(opts map[string]any) RunOption {
	return func(c *runConfig) {
		if c.options == nil {
			c.options = make(map[string]any, len(opts))
		}
		maps.Copy(c.options, opts)
	}
}

// WithSettings overrides the agent's request settings for this run (non-zero
// fields only).
func WithSettings(s Settings) RunOption {
	return func(c *runConfig) { c.settings = c.settings.merge(s) }
}

// WithRunLimits replaces the runtime's usage limits for this run.
func WithRunLimits(l UsageLimits) RunOption { return func(c *runConfig) { c.limits = &l } }

// Run runs agent on input until a final answer, an interruption or a
// failure. It is Stream drained, without text deltas: it calls the model's
// Generate rather than Stream. On failure it returns the error and a non-nil
// partial Result; an interrupted run returns a Result with
// StatusInterrupted and a nil error.
func (rt *Runtime) Run(ctx context.Context, agent *Agent, input string, opts ...RunOption) (*Result, error) {
	r := rt.newRun(ctx, agent, input, opts, nil)
	r.start()
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
		r := rt.newRun(ctx, agent, input, opts, yield)
		r.start()
	}
}

// Decision is a human's answer to a call waiting for approval.
type Decision struct {
	CallID  string `json:"call_id"`
	Approve bool   `json:"approve"`
	// Reason is shown to the model when the call is rejected.
	Reason string `json:"reason,omitempty"`
	// Arguments, when set on an approval, replace the call's arguments.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Approve approves a pending call.
func Approve(callID string) Decision { return Decision{CallID: callID, Approve: true} }

// ApproveWithArguments approves a pending call with edited arguments.
func ApproveWithArguments(callID string, args json.RawMessage) Decision {
	return Decision{CallID: callID, Approve: true, Arguments: args}
}

// Reject rejects a pending call; the model sees reason in an is-error result.
func Reject(callID, reason string) Decision {
	return Decision{CallID: callID, Reason: reason}
}

// Resume continues an interrupted run from its checkpoint, possibly in
// another process, with one decision per pending call. The checkpoint is
// claimed atomically: resuming twice fails with ErrNotFound, and decisions
// that do not match the pending calls fail without consuming it.
func (rt *Runtime) Resume(ctx context.Context, agent *Agent, runID string, decisions ...Decision) (*Result, error) {
	r := rt.resumeRun(ctx, agent, runID, decisions, nil)
	r.start()
	return r.result, r.err
}

// ResumeStream is Resume as a stream of events, like Stream.
func (rt *Runtime) ResumeStream(ctx context.Context, agent *Agent, runID string, decisions ...Decision) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := rt.resumeRun(ctx, agent, runID, decisions, yield)
		r.start()
	}
}

func newRunID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "run_" + hex.EncodeToString(b[:])
}
