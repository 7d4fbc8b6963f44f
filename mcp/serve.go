package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
)

// AgentTool describes an agent served as one MCP tool by [AddAgent]: the
// tool takes a prompt, runs the agent on it and returns its answer.
type AgentTool struct {
	// Agent runs for every call; required.
	Agent *runlet.Agent
	// Runtime runs it; nil means runlet.NewRuntime().
	Runtime *runlet.Runtime
	// Name is the tool's name; the default is the agent's name (sanitised),
	// else "agent".
	Name string
	// Description tells the client's model what the agent does; the default
	// names the agent.
	Description string
	// Sessions adds an optional session_id argument: calls with the same ID
	// continue one conversation. The Runtime needs a session store
	// (runlet.WithStore). The IDs are the callers': whoever can call the
	// server can continue any session whose ID they know.
	Sessions bool
}

type agentInput struct {
	Prompt    string `json:"prompt"`
	SessionID string `json:"session_id,omitempty"`
}

// AddAgent adds the agent as a tool of s. Each call runs the agent; while it
// runs, a client that asked for progress (a progressToken) gets a
// notifications/progress for each model call and tool call. Cancelling the
// request (notifications/cancelled, or a closed connection) cancels the run.
// A failed run, or one that stops for a human's approval (which MCP cannot
// ask for), is an isError result saying why; so is a panic (of the model,
// say), which is logged to slog.Default() with its stack.
func AddAgent(s *sdkmcp.Server, a AgentTool) error {
	if s == nil || a.Agent == nil {
		return errors.New("mcp: AddAgent needs a server and an agent")
	}
	rt := a.Runtime
	if rt == nil {
		rt = runlet.NewRuntime()
	}
	name := a.Name
	if name == "" {
		name = sanitize(a.Agent.Name)
	}
	if name == "" {
		name = "agent"
	}
	desc := a.Description
	if desc == "" {
		desc = "Asks the " + name + " agent: give it a task or a question in prompt; it answers in text."
	}
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"prompt": {Type: "string", Description: "The task or question for the agent."},
		},
		Required: []string{"prompt"},
	}
	if a.Sessions {
		schema.Properties["session_id"] = &jsonschema.Schema{Type: "string",
			Description: "Continues the conversation of earlier calls with the same ID; omit for a new one."}
	}
	s.AddTool(&sdkmcp.Tool{Name: name, Description: desc, InputSchema: schema},
		func(ctx context.Context, req *sdkmcp.CallToolRequest) (res *sdkmcp.CallToolResult, err error) {
			// The SDK does not recover a handler's panic: one would end the
			// server, and every client's session with it.
			defer func() {
				if v := recover(); v != nil {
					msg := fmt.Sprint(v)
					if len(msg) > 256 {
						msg = msg[:256] + "..."
					}
					slog.Error("runlet/mcp: the agent panicked", "tool", name, "panic", msg, "stack", string(debug.Stack()))
					res, err = errorResult("The agent failed: it crashed (panic: "+strings.ToValidUTF8(msg, "?")+")."), nil
				}
			}()
			var in agentInput
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || strings.TrimSpace(in.Prompt) == "" {
				return errorResult("The arguments must be a JSON object with a non-empty string prompt."), nil
			}
			var opts []runlet.RunOption
			if in.SessionID != "" {
				if !a.Sessions {
					return errorResult("This agent takes no session_id."), nil
				}
				opts = append(opts, runlet.WithSession(in.SessionID))
			}
			return runAgent(ctx, rt, a.Agent, in.Prompt, opts, newProgress(req))
		})
	return nil
}

// runAgent runs the agent and makes its outcome a tool result.
func runAgent(ctx context.Context, rt *runlet.Runtime, agent *runlet.Agent, prompt string, opts []runlet.RunOption, p *progress) (*sdkmcp.CallToolResult, error) {
	for ev, err := range rt.Stream(ctx, agent, prompt, opts...) {
		switch ev := ev.(type) {
		case *runlet.ModelStarted:
			p.notify(ctx, fmt.Sprintf("turn %d: model call", ev.Turn))
		case *runlet.ToolStarted:
			p.notify(ctx, fmt.Sprintf("turn %d: calling %s", ev.Turn, ev.Call.Name))
		case *runlet.RunFinished:
			res := &sdkmcp.CallToolResult{Content: answerContent(ev.Result)}
			res.Meta = sdkmcp.Meta{"runlet/run_id": ev.Result.RunID}
			if ev.Result.SessionID != "" {
				res.Meta["runlet/session_id"] = ev.Result.SessionID
			}
			return res, nil
		case *runlet.RunInterrupted:
			names := make([]string, len(ev.Pending))
			for i, c := range ev.Pending {
				names[i] = c.Name
			}
			return errorResult("The agent stopped to wait for a human's approval of " + strings.Join(names, ", ") +
				", which cannot be given over MCP."), nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return errorResult("The agent failed: " + err.Error()), nil
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return errorResult("The agent ended without an answer."), nil
}

// progress sends notifications/progress for one request, if its client
// asked for them.
type progress struct {
	req   *sdkmcp.CallToolRequest
	token any
	n     float64
}

func newProgress(req *sdkmcp.CallToolRequest) *progress {
	return &progress{req: req, token: req.Params.GetProgressToken()}
}

func (p *progress) notify(ctx context.Context, msg string) {
	if p.token == nil || p.req.Session == nil {
		return
	}
	p.n++
	// Best effort: a client that went away gets cancelled anyway.
	_ = p.req.Session.NotifyProgress(ctx, &sdkmcp.ProgressNotificationParams{
		ProgressToken: p.token, Progress: p.n, Message: msg})
}

// AddTools adds runlet tools to s as MCP tools, with their names,
// descriptions and input schemas, served on runlet.NewRuntime(); see
// [AddToolsWith].
func AddTools(s *sdkmcp.Server, tools ...runlet.Tool) error {
	return AddToolsWith(s, nil, tools...)
}

// AddToolsWith adds runlet tools to s as MCP tools, with their names,
// descriptions and input schemas. Every call runs through rt's tool
// executor (runlet.Runtime.CallTool), as a call in a run would: its
// arguments are checked against the tool's schema, it is bounded by the
// tool's timeout, else rt's (runlet.WithToolTimeout), its output is capped
// (runlet.WithMaxToolOutput, 64 KiB by default), a panic is recovered and
// logged to rt's logger, and every failure is an isError result with the
// message a model sees in a run. rt nil means runlet.NewRuntime(). A
// cancelled request cancels the call. A tool that requires approval is
// refused: MCP has no way to ask for it (serve it through an agent, or let
// the client ask its user).
func AddToolsWith(s *sdkmcp.Server, rt *runlet.Runtime, tools ...runlet.Tool) error {
	if s == nil {
		return errors.New("mcp: AddTools needs a server")
	}
	if rt == nil {
		rt = runlet.NewRuntime()
	}
	for i, t := range tools {
		if t == nil {
			return fmt.Errorf("mcp: tool %d is nil", i)
		}
		spec := t.Spec()
		if runlet.PolicyOf(t).RequiresApproval {
			return fmt.Errorf("mcp: tool %q requires approval, which an MCP server cannot ask for", spec.Name)
		}
		schema := spec.InputSchema
		if schema == nil {
			schema = &jsonschema.Schema{Type: "object"}
		}
		if schema.Type != "object" {
			return fmt.Errorf("mcp: tool %q: MCP needs an object input schema, not %q", spec.Name, schema.Type)
		}
		s.AddTool(&sdkmcp.Tool{Name: spec.Name, Description: spec.Description, InputSchema: schema}, toolHandler(rt, t))
	}
	return nil
}

func toolHandler(rt *runlet.Runtime, t runlet.Tool) sdkmcp.ToolHandler {
	return func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		res, kind := rt.CallTool(ctx, t, runlet.ToolCallPart{Arguments: req.Params.Arguments})
		if kind == runlet.ToolCanceled && ctx.Err() != nil {
			return nil, ctx.Err() // the client cancelled: it wants no answer
		}
		return servedResult(res), nil
	}
}

func textResult(text string) *sdkmcp.CallToolResult {
	return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: text}}}
}

func errorResult(text string) *sdkmcp.CallToolResult {
	res := textResult(text)
	res.IsError = true
	return res
}

// ServeStdio serves s on standard input and output until the client
// disconnects or ctx ends, as a subprocess of an MCP client such as Claude
// Desktop does.
func ServeStdio(ctx context.Context, s *sdkmcp.Server) error {
	return s.Run(ctx, &sdkmcp.StdioTransport{})
}
