package runlet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	ret, err := t.callOn(ctx, defaultRuntime(), args)
	return ret.text(), err
}

var _ PartsTool = (*agentTool)(nil)

// CallParts is Call returning the agent's whole answer: its text, and the
// images, files and audio it holds.
func (t *agentTool) CallParts(ctx context.Context, args json.RawMessage) (ToolOutput, error) {
	ret, err := t.callOn(ctx, defaultRuntime(), args)
	return ret.output(), err
}

// callOn runs the agent on rt, as a run of its own.
func (t *agentTool) callOn(ctx context.Context, rt *Runtime, args json.RawMessage) (toolRet, error) {
	if err := t.in.validate(args); err != nil {
		return toolRet{}, err
	}
	input, err := t.in.call(ctx, args)
	if err != nil {
		return toolRet{}, err
	}
	res, err := rt.Run(ctx, t.agent, input)
	if err != nil {
		return toolRet{}, err
	}
	if res.Status == StateInterrupted {
		return toolRet{}, fmt.Errorf("agent %q needs an approval, which a tool called outside a run cannot wait for", t.agent.Name)
	}
	return answerOf(res), nil
}

// answerOf is an agent's answer as its tool returns it: the text, or,
// when the final message holds images, files or audio too, those parts in
// order with the text (without the provider's continuation state, which
// belongs to the agent's own conversation).
func answerOf(res *Result) toolRet {
	var final *Message
	for i := len(res.Messages) - 1; i >= 0; i-- {
		if res.Messages[i].Role == RoleAssistant {
			final = &res.Messages[i]
			break
		}
	}
	if final == nil || !slices.ContainsFunc(final.Parts, func(p Part) bool { return mediaBytes(p) > 0 }) {
		return toolRet{s: res.Output}
	}
	var parts []Part
	for _, p := range final.Parts {
		switch p := p.(type) {
		case TextPart:
			parts = append(parts, Text(p.Text))
		case ImagePart, FilePart, AudioPart:
			parts = append(parts, p)
		}
	}
	return retOf(Output(parts...))
}

// text is what Call returns of a call's result.
func (r toolRet) text() string {
	if r.o == nil {
		return r.s
	}
	res, err := r.o.resolve()
	if err != nil {
		return ""
	}
	return res.content
}

// output is what CallParts returns of a call's result.
func (r toolRet) output() ToolOutput {
	if r.o == nil {
		return Output(Text(r.s))
	}
	return *r.o
}

// pausedError reports that a nested agent was interrupted; its caller keeps
// the checkpoint in its own.
type pausedError struct{ cp *Checkpoint }

func (e *pausedError) Error() string { return "runlet: agent interrupted" }

// runNested runs the agent as part of parent's run, for the call callID:
// fresh, or from its checkpoint with the decisions for it.
func (t *agentTool) runNested(ctx context.Context, parent *run, callID string, args json.RawMessage, hist []Message, from *Checkpoint, decided []Decision) (toolRet, error) {
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
			return toolRet{}, err
		}
		r.input, r.cfg.history = input, hist
	}
	r.start(ctx)
	if r.paused != nil {
		return toolRet{}, &pausedError{r.paused}
	}
	if r.err != nil {
		return toolRet{}, fmt.Errorf("agent %s: %w", t.agent.Name, r.err)
	}
	return answerOf(r.result), nil
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
