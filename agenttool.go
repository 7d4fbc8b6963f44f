package runlet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// AgentToolOption configures the tool made by Agent.AsTool.
type AgentToolOption func(*agentToolConfig)

type agentToolConfig struct {
	name, description string
	schema            *jsonschema.Schema
	prompt            func(ctx context.Context, args json.RawMessage) (string, error)
	history           bool
	policy            ToolPolicy
	err               error
}

// AgentToolName sets the tool's name (the agent's Name by default, with
// the characters a provider refuses replaced by '_').
func AgentToolName(name string) AgentToolOption {
	return func(c *agentToolConfig) { c.name = name }
}

// AgentToolDescription sets the tool's description (the agent's
// Description by default).
func AgentToolDescription(d string) AgentToolOption {
	return func(c *agentToolConfig) { c.description = d }
}

// AgentToolInput makes the tool take a typed input: its schema is
// inferred from In as NewTool does, the model's arguments are validated
// against it, and prompt turns them into the agent's input. Without it the
// tool takes {"input": string}, used as the prompt as is.
func AgentToolInput[In any](prompt func(In) (string, error)) AgentToolOption {
	return func(c *agentToolConfig) {
		c.schema, c.err = jsonschema.For[In](nil)
		c.prompt = func(_ context.Context, args json.RawMessage) (string, error) {
			var in In
			if err := json.Unmarshal(args, &in); err != nil {
				return "", &ToolError{Kind: ToolInvalidArgs, Err: err}
			}
			return prompt(in)
		}
	}
}

// AgentToolHistory gives the agent the conversation its caller's model saw
// before the call, ahead of its input. By default it sees its input only.
func AgentToolHistory() AgentToolOption {
	return func(c *agentToolConfig) { c.history = true }
}

// AgentToolPolicy sets the tool's policy: a timeout for the whole nested
// run, a cap on its answer's size, or a human approval before it starts.
func AgentToolPolicy(p ToolPolicy) AgentToolOption {
	return func(c *agentToolConfig) { c.policy = p }
}

// agentInput is the default input of an agent's tool.
type agentInput struct {
	Input string `json:"input" jsonschema:"the request for the agent, complete: it sees nothing else of the conversation"`
}

// AsTool returns a Tool that runs the agent, so another agent can call it.
// Its answer (Result.Output) is the tool's result; its failure, as any
// tool's, an is-error result the calling model sees.
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
// caller. The agent sees its input only, unless AgentToolHistory.
//
// Called outside a run (or through a Tool that wraps it), it runs on a
// Runtime of its own, with no approvals.
//
// AsTool panics on an invalid AgentToolName or an AgentToolInput type with
// no object schema, programming errors like those NewTool panics on.
func (a *Agent) AsTool(opts ...AgentToolOption) Tool {
	var c agentToolConfig
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		panic(fmt.Sprintf("runlet: agent %q as a tool: inferring input schema: %v", a.Name, c.err))
	}
	name := cmp.Or(c.name, toolNameFor(a.Name))
	desc := cmp.Or(c.description, a.Description, "Ask the "+a.Name+" agent.")
	prompt := c.prompt
	if prompt == nil {
		prompt = func(ctx context.Context, args json.RawMessage) (string, error) {
			var in agentInput
			if err := json.Unmarshal(args, &in); err != nil {
				return "", &ToolError{Kind: ToolInvalidArgs, Err: err}
			}
			return in.Input, nil
		}
	}
	var in Tool
	var err error
	if c.schema == nil {
		in, err = NewToolE(name, desc, func(context.Context, agentInput) (string, error) { return "", nil })
	} else {
		in, err = NewToolE(name, desc, func(context.Context, struct{}) (string, error) { return "", nil }, WithInputSchema(c.schema))
	}
	if err != nil {
		panic(err)
	}
	ft := in.(*funcTool)
	ft.call, ft.policy = prompt, c.policy
	return &agentTool{agent: a, in: ft, history: c.history}
}

// agentTool is the Tool AsTool makes.
type agentTool struct {
	agent   *Agent
	in      *funcTool // spec, schema and policy; its call builds the prompt
	history bool
}

func (t *agentTool) Spec() ToolSpec     { return t.in.spec }
func (t *agentTool) Policy() ToolPolicy { return t.in.policy }

// defaultRuntime runs agent tools called outside a run.
var defaultRuntime = sync.OnceValue(func() *Runtime { return NewRuntime() })

// Call runs the agent on a Runtime of its own; a run calls it nested
// instead (see AsTool).
func (t *agentTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	if err := t.in.validate(args); err != nil {
		return "", err
	}
	input, err := t.in.call(ctx, args)
	if err != nil {
		return "", err
	}
	res, err := defaultRuntime().Run(ctx, t.agent, input)
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
	r := &run{rt: parent.rt, agent: t.agent, parent: parent, depth: parent.depth + 1, path: callID, from: from, decided: decided}
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

// toolNameFor makes an agent's name a valid tool name.
func toolNameFor(name string) string {
	b := []byte(name)
	if len(b) > 64 {
		b = b[:64]
	}
	for i, c := range b {
		if !validToolName(string(c)) {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "agent"
	}
	return string(b)
}

// asPaused returns the checkpoint of a nested agent's interruption.
func asPaused(err error) *Checkpoint {
	var p *pausedError
	if errors.As(err, &p) {
		return p.cp
	}
	return nil
}
