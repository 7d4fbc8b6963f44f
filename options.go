package runlet

import (
	"cmp"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// RuntimeOption configures a Runtime (see NewRuntime).
type RuntimeOption interface{ applyRuntime(*Runtime) }

// RunOption configures one run (Runtime.Run, Stream, RunAs, ...).
type RunOption interface{ applyRun(*runConfig) }

// ToolOption configures a tool made by NewTool.
type ToolOption interface{ applyTool(*funcTool) }

// SharedOption is an option for a Runtime, where it is the default of every
// run, and for one run, where it wins over the Runtime's.
type SharedOption interface {
	RuntimeOption
	RunOption
}

// ToolLimitOption bounds tool calls at every level: a Runtime, a run or one
// tool. The most specific wins: tool over run over Runtime.
type ToolLimitOption interface {
	RuntimeOption
	RunOption
	ToolOption
}

// scope is what a Runtime and a run can both set. On a run, zero values
// leave the Runtime's in place, and lists add to the Runtime's.
type scope struct {
	observers     []Observer
	hooks         []Hooks
	preparers     []Preparer
	limits        *UsageLimits
	maxTurns      int
	toolTimeout   time.Duration
	maxToolOutput int
	pricer        Pricer
	guardrails    []Guardrail
}

// with returns the scope of one run: run's values over s, its lists after
// s's.
func (s scope) with(run scope) scope {
	s.observers = append(slices.Clip(s.observers), run.observers...)
	s.hooks = append(slices.Clip(s.hooks), run.hooks...)
	s.preparers = append(slices.Clip(s.preparers), run.preparers...)
	s.guardrails = append(slices.Clip(s.guardrails), run.guardrails...)
	s.limits = cmp.Or(run.limits, s.limits)
	s.maxTurns = cmp.Or(run.maxTurns, s.maxTurns)
	s.toolTimeout = cmp.Or(run.toolTimeout, s.toolTimeout)
	s.maxToolOutput = cmp.Or(run.maxToolOutput, s.maxToolOutput)
	if run.pricer != nil {
		s.pricer = run.pricer
	}
	return s
}

type runtimeOption func(*Runtime)

func (o runtimeOption) applyRuntime(rt *Runtime) { o(rt) }

type runOption func(*runConfig)

func (o runOption) applyRun(c *runConfig) { o(c) }

type toolOption func(*funcTool)

func (o toolOption) applyTool(t *funcTool) { o(t) }

type sharedOption func(*scope)

func (o sharedOption) applyRuntime(rt *Runtime) { o(&rt.scope) }
func (o sharedOption) applyRun(c *runConfig)    { o(&c.scope) }

type toolLimitOption struct {
	scope func(*scope)
	tool  func(*ToolPolicy)
}

func (o toolLimitOption) applyRuntime(rt *Runtime) { o.scope(&rt.scope) }
func (o toolLimitOption) applyRun(c *runConfig)    { o.scope(&c.scope) }
func (o toolLimitOption) applyTool(t *funcTool)    { o.tool(&t.policy) }

// WithObservers adds observers; they see every event, in order. On a run
// they come after the Runtime's.
func WithObservers(o ...Observer) SharedOption {
	return sharedOption(func(s *scope) { s.observers = append(s.observers, o...) })
}

// WithHooks adds hook sets; several compose in the order given. On a run
// they come after the Runtime's.
func WithHooks(h ...Hooks) SharedOption {
	return sharedOption(func(s *scope) { s.hooks = append(s.hooks, h...) })
}

// WithPreparers adds context preparers, run in order before every model
// call. On a run they come after the Runtime's.
func WithPreparers(p ...Preparer) SharedOption {
	return sharedOption(func(s *scope) { s.preparers = append(s.preparers, p...) })
}

// WithLimits sets usage limits: on a Runtime for every run, on a run
// instead of the Runtime's.
func WithLimits(l UsageLimits) SharedOption {
	return sharedOption(func(s *scope) { s.limits = &l })
}

// WithMaxTurns bounds model calls per run: on a Runtime for every run
// (20 if unset), on a run for that run. Agent.MaxTurns wins over
// the Runtime's, a run's over both.
func WithMaxTurns(n int) SharedOption {
	return sharedOption(func(s *scope) { s.maxTurns = n })
}

// WithToolTimeout bounds each tool call, for a Runtime, a run or one tool
// (the most specific wins). A timed-out call becomes an is-error result; the tool's context is cancelled, and a tool that does not
// return within 100 ms of that is abandoned (its goroutine ends whenever the
// tool does). While as many abandoned tools of a run as WithToolConcurrency
// allows have not returned, the run starts no more calls: each gets an
// is-error result saying so, and a model cannot pile up one goroutine per
// call of a tool that ignores its context.
func WithToolTimeout(d time.Duration) ToolLimitOption {
	return toolLimitOption{
		scope: func(s *scope) { s.toolTimeout = d },
		tool:  func(p *ToolPolicy) { p.Timeout = d },
	}
}

// WithMaxToolOutput sets the size in bytes above which a tool's output, an
// error message or a panic value included, is truncated with a marker, for
// a Runtime, a run or one tool, the most specific winning
// (64 KiB if unset; negative: never).
//
// The images, files and audio a tool returns (see ToolOutput) count too,
// by their data's (or URL's) length, and so does a structured value. They
// cannot be cut as text is: an output whose media and structured value
// alone exceed the cap becomes an is-error result (ToolOutputTooLarge)
// that says so; the text is cut to the room left. Unset, the cap is
// 64 KiB of text and, apart from it, 20 MiB of media.
func WithMaxToolOutput(n int) ToolLimitOption {
	return toolLimitOption{
		scope: func(s *scope) { s.maxToolOutput = n },
		tool:  func(p *ToolPolicy) { p.MaxOutput = n },
	}
}

// WithStore sets the session, state and checkpoint store:
// NewMemoryStore() for one process, store/sqlite or store/postgres to keep
// sessions across processes. Without a store, a run WithSession fails
// before any model call, rather than start a session that nothing keeps. To
// keep sessions, state and checkpoints in different places, pass a struct
// embedding one SessionStore, StateStore and CheckpointStore each.
func WithStore(s Store) RuntimeOption {
	return runtimeOption(func(rt *Runtime) { rt.sessions, rt.state, rt.checkpoints = s, s, s })
}

// WithToolConcurrency bounds how many tool calls of one turn run at once
// (8 if unset; 1 runs them one by one). A pool of that many workers takes
// the calls in the model's order, so a turn of thousands of calls starts no
// more goroutines than a turn of a few; to refuse such a turn, set
// UsageLimits.ToolCalls.
func WithToolConcurrency(n int) RuntimeOption {
	return runtimeOption(func(rt *Runtime) { rt.toolConcurrency = n })
}

// WithLogger sets where the runtime reports its own problems, such as a
// panicking observer (slog.Default() if unset).
func WithLogger(l *slog.Logger) RuntimeOption {
	return runtimeOption(func(rt *Runtime) { rt.logger = l })
}

type runConfig struct {
	scope
	sessionID string
	history   []Message
	input     []Message
	runID     string
	options   map[string]any
	settings  Settings
	output    outputConfig
	// heldOutput holds answer deltas back until guardrails pass (see
	// WithHeldOutput).
	heldOutput bool
}

// WithSession runs in a session: history is loaded from the session store
// first, and each completed turn is appended to it. A failed or cancelled
// run leaves only complete turns (never a tool call without its result).
// The Runtime needs a session store (see WithStore); without one the run
// fails before calling the model, with an error wrapping ErrNoSession.
func WithSession(id string) RunOption { return runOption(func(c *runConfig) { c.sessionID = id }) }

// WithHistory sets the messages that precede the input, instead of (or in
// front of) a session's history.
func WithHistory(msgs ...Message) RunOption {
	return runOption(func(c *runConfig) { c.history = append(c.history, msgs...) })
}

// WithInput adds input messages after the input string (if any): images,
// files, several parts, or any prepared message.
func WithInput(msgs ...Message) RunOption {
	return runOption(func(c *runConfig) { c.input = append(c.input, msgs...) })
}

// WithRunID sets the run ID (a random ID otherwise).
func WithRunID(id string) RunOption { return runOption(func(c *runConfig) { c.runID = id }) }

// WithOptions sets provider-specific request options for this run; they
// override the agent's Options key by key.
func WithOptions(opts map[string]any) RunOption {
	return runOption(func(c *runConfig) {
		if c.options == nil {
			c.options = make(map[string]any, len(opts))
		}
		maps.Copy(c.options, opts)
	})
}

// WithSettings overrides the agent's request settings for this run (non-zero
// fields only).
func WithSettings(s Settings) RunOption {
	return runOption(func(c *runConfig) { c.settings = c.settings.merge(s) })
}

// WithApproval makes every call of the tool wait for a human decision (see
// Runtime.Resume).
func WithApproval() ToolOption {
	return toolOption(func(t *funcTool) { t.policy.RequiresApproval = true })
}

// WithInputSchema replaces the tool's inferred input schema (see
// SchemaFor). On an agent's tool (Agent.AsTool) it replaces the default
// {"input": string}, and the agent's input is then the model's arguments,
// the JSON object as the model wrote it.
func WithInputSchema(s *jsonschema.Schema) ToolOption {
	return toolOption(func(t *funcTool) { t.spec.InputSchema = s })
}

// WithCallerHistory gives an agent called as a tool (Agent.AsTool) the
// conversation its caller's model saw before the call, ahead of its input.
// Without it the agent sees its input only. NewTool refuses it: a function
// tool sees its arguments only.
func WithCallerHistory() ToolOption {
	return toolOption(func(t *funcTool) { t.callerHistory = true })
}
