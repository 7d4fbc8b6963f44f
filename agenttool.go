package runlet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet/internal/toolname"
)

// agentInput is the default input of an agent's tool.
type agentInput struct {
	Input string `json:"input" jsonschema:"the request for the agent, complete: it sees nothing else of the conversation"`
}

// AsTool returns a Tool that runs the agent, so another agent can call it.
// Its answer (Result.Output) is the tool's result; its failure, as any
// tool's, an is-error result the calling model sees.
//
// The tool is named after Agent.Name (with the characters a provider
// refuses replaced by '_') and described by Agent.Description. To offer
// the agent under another name, call AsTool on a copy of the Agent with
// that Name: the name the calling model knows it by is then also the one
// its events and Result.UsageByAgent carry.
//
// AsTool takes ToolOptions, as NewTool does: WithApproval asks a human
// before the agent starts, WithToolTimeout bounds the whole nested run,
// WithMaxToolOutput caps its answer's size. The tool takes {"input":
// string}, the agent's input as is; WithInputSchema gives it another input
// (SchemaFor[T]() for a struct T), which the model's arguments are
// validated against and which the agent receives as that JSON text.
// WithCallerHistory gives it the conversation its caller's model saw.
//
// Called by a run, the agent runs as part of that run, on the same
// Runtime: its events go to the run's Stream and observers, between
// AgentStarted and AgentFinished, with its Name, the run's ID, and a Depth
// and CallPath in their header; its model calls count in the run's usage
// (Result.UsageByAgent splits it) and against the run's limits; its
// MaxTurns, else the run's, bounds its own turns; the run's hooks and
// preparers apply to it too; cancelling the run cancels it. A call of its
// tools that needs approval interrupts the whole run: Result.Pending lists
// it, and Resume with its decision goes on inside the agent, then in its
// caller. The agent sees its input only, unless WithCallerHistory.
//
// Called outside a run (or through a Tool that wraps it), it runs on a
// Runtime of its own, with no approvals.
//
// AsTool panics on an input schema that is not an object, a programming
// error like those NewTool panics on.
func (a *Agent) AsTool(opts ...ToolOption) Tool {
	def, err := jsonschema.For[agentInput](nil)
	if err != nil {
		panic(err) // agentInput is a plain struct
	}
	desc := cmp.Or(a.Description, "Ask the "+a.Name+" agent.")
	ft, err := newFuncTool(ToolSpec{Name: toolNameFor(a.Name), Description: desc, InputSchema: def}, opts)
	if err != nil {
		panic(fmt.Sprintf("runlet: agent %q as a tool: %v", a.Name, err))
	}
	if ft.spec.InputSchema == def {
		ft.call = func(_ context.Context, args json.RawMessage) (string, error) {
			var in agentInput
			if err := json.Unmarshal(args, &in); err != nil {
				return "", &ToolError{Kind: ToolInvalidArgs, Err: err}
			}
			return in.Input, nil
		}
	} else {
		ft.call = func(_ context.Context, args json.RawMessage) (string, error) { return string(args), nil }
	}
	return &agentTool{agent: a, in: ft, history: ft.callerHistory}
}

// agentTool is the Tool AsTool makes.
type agentTool struct {
	agent   *Agent
	in      *funcTool // spec, schema and policy; its call builds the prompt
	history bool
}

func (t *agentTool) Spec() ToolSpec { return t.in.spec }

var _ PolicyTool = (*agentTool)(nil)

func (t *agentTool) Policy() ToolPolicy { return t.in.policy }

// defaultRuntime runs agent tools called outside a run.
var defaultRuntime = sync.OnceValue(func() *Runtime { return NewRuntime() })

// Call runs the agent on a Runtime of its own; a run calls it nested
// instead (see AsTool).
func (t *agentTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	return t.callOn(ctx, defaultRuntime(), args)
}

// callOn runs the agent on rt, as a run of its own.
func (t *agentTool) callOn(ctx context.Context, rt *Runtime, args json.RawMessage) (string, error) {
	if err := t.in.validate(args); err != nil {
		return "", err
	}
	input, err := t.in.call(ctx, args)
	if err != nil {
		return "", err
	}
	res, err := rt.Run(ctx, t.agent, input)
	if err != nil {
		return "", err
	}
	if res.Status == StateInterrupted {
		return "", fmt.Errorf("agent %q needs an approval, which a tool called outside a run cannot wait for", t.agent.Name)
	}
	return res.Output, nil
}

// pausedError reports that a nested agent was interrupted; its caller keeps
// the checkpoint in its own.
type pausedError struct{ cp *Checkpoint }

func (e *pausedError) Error() string { return "runlet: agent interrupted" }

// runNested runs the agent as part of parent's run, for the call callID:
// fresh, or from its checkpoint with the decisions for it.
func (t *agentTool) runNested(ctx context.Context, parent *run, callID string, args json.RawMessage, hist []Message, from *Checkpoint, decided []Decision) (string, error) {
	r := &run{rt: parent.rt, agent: t.agent}
	r.parent, r.depth, r.path = parent, parent.depth+1, callID
	r.from, r.decided = from, decided
	if parent.path != "" {
		r.path = parent.path + "/" + callID
	}
	r.cfg.runID = parent.cfg.runID
	if from != nil {
		r.resuming = true
	} else {
		input, err := t.in.call(ctx, args)
		if err != nil {
			return "", err
		}
		r.input, r.cfg.history = input, hist
	}
	r.start(ctx)
	if r.paused != nil {
		return "", &pausedError{r.paused}
	}
	if r.err != nil {
		return "", fmt.Errorf("agent %s: %w", t.agent.Name, r.err)
	}
	return r.result.Output, nil
}

// toolNameFor makes an agent's name a valid tool name, as every tool name
// of this module is made (internal/toolname).
func toolNameFor(name string) string { return toolname.Make("", name, "agent") }

// asPaused returns the checkpoint of a nested agent's interruption.
func asPaused(err error) *Checkpoint {
	var p *pausedError
	if errors.As(err, &p) {
		return p.cp
	}
	return nil
}
