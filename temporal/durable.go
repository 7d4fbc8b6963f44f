package temporal

import (
	"fmt"
	"time"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Names under which Register puts the workflow, its activities, its update
// and its queries on a worker. Starters and clients use them too.
const (
	WorkflowName          = "runlet.RunAgent"
	ModelActivityName     = "runlet.Model"
	ToolActivityName      = "runlet.Tool"
	LoadSessionActivity   = "runlet.LoadSession"
	AppendSessionActivity = "runlet.AppendSession"
	DecideUpdate          = "runlet.decide"
	PendingQuery          = "runlet.pending"
	ProgressQuery         = "runlet.progress"
)

// Runlet's defaults, which the workflow keeps (see runlet.WithMaxTurns,
// runlet.WithMaxToolOutput and runlet.WithToolConcurrency).
const (
	defaultMaxTurns        = 20
	defaultMaxToolOutput   = 64 << 10
	defaultToolConcurrency = 8
	defaultOutputRetries   = 2
)

// Config is what a worker knows: the agents it runs, by name, and what the
// runs it executes share. Everything in it stays on the worker; the workflow
// input names an agent and carries data only.
type Config struct {
	// Agents are the agents the worker can run, by Agent.Name. Their
	// models and tools come with them.
	Agents []*runlet.Agent
	// Models can replace an agent's model for one run (RunInput.Model).
	Models map[string]runlet.Model

	// Observers receive the runs' events: model and tool events from the
	// activities, as they happen; run, state and approval events from the
	// workflow, never during replay. They run on the worker, must be quick,
	// and see an event again when Temporal retries the task that made it.
	Observers []runlet.Observer
	// Hooks and Preparers run inside the activities: the model-call hooks
	// and the preparers in the model activity, the tool-call hooks in the
	// tool activity. They may do anything an activity may.
	Hooks     []runlet.Hooks
	Preparers []runlet.Preparer
	// Guardrails check every run's input, final answer and tool calls, as
	// runlet.WithGuardrails does, after the agents' own; each check runs
	// in an activity (see the package doc, "Guardrails").
	Guardrails []runlet.Guardrail
	// Sessions keeps the sessions runs continue (RunInput.SessionID).
	Sessions runlet.SessionStore
	// State keeps the sessions' key-value state (runlet.GetState,
	// SetState, DeleteState) for the tools, hooks and preparers of runs
	// with a SessionID; default: Sessions, when it is a
	// runlet.StateStore too (runlet.NewMemoryStore and the stores of
	// store/ are). See the package doc, "Session state".
	State runlet.StateStore
	// Payloads, when set, keeps the conversation out of the workflow's
	// history: tool results larger than InlineLimit bytes of JSON are
	// stored there and the history holds a stand-in and a Ref (key and
	// SHA-256); the model activity stores the transcript there, chunk by
	// chunk, so each activity carries only what is new (see the package
	// doc, "Long runs"). Every worker of the task queue must share it, and
	// Wait needs it to read the results back.
	Payloads PayloadStore
	// InlineLimit is the size in bytes of JSON up to which a tool result
	// stays in the history with Payloads (default 2 KiB).
	InlineLimit int
	// Stream makes the model activity call Model.Stream and pass text,
	// reasoning and tool-call deltas to the Observers as they arrive.
	Stream bool
	// Publisher, when set, receives the text and reasoning deltas of every
	// model call as they arrive, for the callers of the runs (a Hub, or
	// the application's broker), and makes the model activity stream. See
	// the package doc, "Streaming to the caller".
	Publisher Publisher

	// ModelActivity and ToolActivity set the activities' timeouts and
	// retries; zero fields take the defaults below.
	ModelActivity ActivityOptions
	ToolActivity  ActivityOptions
	// ToolTimeout bounds one tool call when its tool sets no timeout of its
	// own (zero: the activity's StartToClose timeout only).
	ToolTimeout time.Duration
	// MaxToolOutput caps a tool result in bytes (zero:
	// 64 KiB, as in Runlet; negative: no cap).
	MaxToolOutput int
}

// ActivityOptions set one kind of activity's timeouts and retry policy.
type ActivityOptions struct {
	// StartToClose bounds one attempt. Default: 10 minutes.
	StartToClose time.Duration
	// Heartbeat is the heartbeat timeout: a worker that dies mid-attempt is
	// noticed after it, and the attempt retried. Default: 30 s for tools,
	// none for models (the model activity heartbeats while streaming).
	Heartbeat time.Duration
	// ScheduleToStart bounds the wait for a worker (default: unbounded).
	ScheduleToStart time.Duration
	// Retry is the retry policy. Default: from 1 s, doubling, at most
	// 1 min apart, 5 attempts. Non-retryable Runlet errors are never
	// retried whatever it says, and a provider's Retry-After sets the next
	// delay.
	Retry *temporal.RetryPolicy
}

func (o ActivityOptions) workflowOptions(defaultHeartbeat time.Duration) workflow.ActivityOptions {
	ao := workflow.ActivityOptions{
		StartToCloseTimeout:    o.StartToClose,
		HeartbeatTimeout:       o.Heartbeat,
		ScheduleToStartTimeout: o.ScheduleToStart,
		RetryPolicy:            o.Retry,
	}
	if ao.StartToCloseTimeout <= 0 {
		ao.StartToCloseTimeout = 10 * time.Minute
	}
	if ao.HeartbeatTimeout == 0 {
		ao.HeartbeatTimeout = defaultHeartbeat
	}
	if ao.RetryPolicy == nil {
		ao.RetryPolicy = &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    5,
		}
	}
	return ao
}

// Registry is what Register needs from a worker: worker.Worker and
// testsuite's environments have it.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Durable runs agents as Temporal workflows. Make one with New and Register
// it on a worker.
type Durable struct {
	cfg         Config
	agents      map[string]*runlet.Agent
	transcripts transcriptCache
	tools       *runlet.Runtime // the executor of the tool activity's calls
}

// New checks cfg and returns a Durable. It fails on an agent without a name
// or model and on two agents with one name.
func New(cfg Config) (*Durable, error) {
	d := &Durable{cfg: cfg, agents: make(map[string]*runlet.Agent, len(cfg.Agents))}
	for i, a := range cfg.Agents {
		switch {
		case a == nil:
			return nil, fmt.Errorf("runlet/temporal: agent %d is nil", i)
		case a.Name == "":
			return nil, fmt.Errorf("runlet/temporal: agent %d has no name; the workflow input names agents", i)
		case a.Model == nil:
			return nil, fmt.Errorf("runlet/temporal: agent %q has no model", a.Name)
		}
		if _, dup := d.agents[a.Name]; dup {
			return nil, fmt.Errorf("runlet/temporal: two agents named %q", a.Name)
		}
		d.agents[a.Name] = a
	}
	// The tool activity calls tools through Runlet's executor, with the
	// worker's limits (unset: Runlet's defaults, 64 KiB of text and 20 MiB
	// of media).
	var limits []runlet.RuntimeOption
	if d.cfg.MaxToolOutput != 0 {
		limits = append(limits, runlet.WithMaxToolOutput(d.cfg.MaxToolOutput))
	}
	if d.cfg.ToolTimeout > 0 {
		limits = append(limits, runlet.WithToolTimeout(d.cfg.ToolTimeout))
	}
	d.tools = runlet.NewRuntime(limits...)
	if d.cfg.MaxToolOutput == 0 {
		d.cfg.MaxToolOutput = defaultMaxToolOutput
	}
	return d, nil
}

// WorkflowRegistry is what RegisterWorkflow needs: a worker, or a
// worker.WorkflowReplayer.
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// Register registers the workflow (WorkflowName) and its activities on r.
func (d *Durable) Register(r Registry) {
	d.RegisterWorkflow(r)
	r.RegisterActivityWithOptions(d.modelActivity, activity.RegisterOptions{Name: ModelActivityName})
	r.RegisterActivityWithOptions(d.toolActivity, activity.RegisterOptions{Name: ToolActivityName})
	r.RegisterActivityWithOptions(d.loadSession, activity.RegisterOptions{Name: LoadSessionActivity})
	r.RegisterActivityWithOptions(d.appendSession, activity.RegisterOptions{Name: AppendSessionActivity})
	r.RegisterActivityWithOptions(d.checkInput, activity.RegisterOptions{Name: CheckInputActivity})
}

// RegisterWorkflow registers the workflow alone, as a
// worker.WorkflowReplayer needs to replay recorded histories.
func (d *Durable) RegisterWorkflow(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(d.runWorkflow, workflow.RegisterOptions{Name: WorkflowName})
}

// agent returns the registered agent named name, or a non-retryable error.
func (d *Durable) agent(name string) (*runlet.Agent, error) {
	a, ok := d.agents[name]
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("runlet/temporal: no agent %q is registered on this worker", name), ErrTypeUnknownAgent, nil)
	}
	return a, nil
}
