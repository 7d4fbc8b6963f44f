package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/runlettest"
)

func weather() runlet.Tool {
	return runlet.NewTool("get_weather", "Returns the weather in a city.",
		func(ctx context.Context, in weatherIn) (string, error) {
			if in.City != "Paris" {
				return "", errors.New("no weather for " + in.City)
			}
			return "sunny", nil
		})
}

// serveClient connects an SDK client to s over in-memory transports; progress
// notifications go to progress.
func serveClient(t *testing.T, s *sdkmcp.Server, progress chan<- string) *sdkmcp.ClientSession {
	t.Helper()
	st, ct := sdkmcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "v0"}, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			if progress != nil {
				progress <- req.Params.Message
			}
		}})
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func resultText(t *testing.T, res *sdkmcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdkmcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t *testing.T, cs *sdkmcp.ClientSession, p *sdkmcp.CallToolParams) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), p)
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	return resultText(t, res), res.IsError
}

func TestAddAgentProgress(t *testing.T) {
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`)),
		runlettest.TextReply("It is sunny in Paris."),
	)
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	if err := mcp.AddAgent(s, mcp.AgentTool{Agent: &runlet.Agent{Name: "weather bot", Model: model, Tools: []runlet.Tool{weather()}}}); err != nil {
		t.Fatal(err)
	}
	progress := make(chan string, 8)
	cs := serveClient(t, s, progress)

	var tool *sdkmcp.Tool
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tool = tl
	}
	schema, _ := json.Marshal(tool.InputSchema)
	if tool.Name != "weather_bot" || strings.Contains(string(schema), "session_id") || !strings.Contains(string(schema), `"required":["prompt"]`) {
		t.Errorf("tool %s, schema %s", tool.Name, schema)
	}
	out, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: "weather_bot", Arguments: map[string]any{"prompt": "Weather in Paris?"},
		Meta: sdkmcp.Meta{"progressToken": "p1"}})
	if isErr || out != "It is sunny in Paris." {
		t.Fatalf("result %q (error %v)", out, isErr)
	}
	want := []string{"turn 1: model call", "turn 1: calling get_weather", "turn 2: model call"}
	for i, w := range want {
		if got := <-progress; got != w {
			t.Errorf("progress %d = %q, want %q", i, got, w)
		}
	}

	for _, args := range []map[string]any{{}, {"prompt": "  "}, {"prompt": "hi", "session_id": "s1"}} {
		if out, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: "weather_bot", Arguments: args}); !isErr {
			t.Errorf("arguments %v: %q, want an error result", args, out)
		}
	}
}

func TestAddAgentSessionsOverHTTP(t *testing.T) {
	model := runlettest.NewModel(runlettest.TextReply("Hello, Ann."), runlettest.TextReply("Your name is Ann."))
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	rt := runlet.NewRuntime(runlet.WithStore(runlet.NewMemoryStore()))
	if err := mcp.AddAgent(s, mcp.AgentTool{Agent: &runlet.Agent{Model: model}, Runtime: rt, Name: "ask", Sessions: true}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mcp.HTTPHandler(s, nil))
	defer hs.Close()
	defer hs.CloseClientConnections()
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "c", Version: "v0"}, nil).
		Connect(t.Context(), &sdkmcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, prompt := range []string{"I am Ann.", "What is my name?"} {
		if _, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": prompt, "session_id": "s1"}}); isErr {
			t.Fatal("error result")
		}
	}
	msgs := model.Requests()[1].Messages
	if len(msgs) != 3 || msgs[0].Text() != "I am Ann." || msgs[1].Text() != "Hello, Ann." {
		t.Errorf("second call's history: %+v", msgs)
	}
}

func TestAddAgentOutcomes(t *testing.T) {
	approval := runlet.NewTool("delete", "Deletes.", func(context.Context, struct{}) (string, error) { return "", nil }, runlet.WithApproval())
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	failing := runlettest.NewModel(runlettest.ErrorReply(errors.New("model exploded")))
	stopping := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "delete", `{}`)))
	blocked, entered := make(chan error, 1), make(chan struct{}, 1)
	blocking := &runlettest.Model{Func: func(ctx context.Context, _ *runlet.ModelRequest) runlettest.Reply {
		entered <- struct{}{}
		<-ctx.Done()
		blocked <- ctx.Err()
		return runlettest.ErrorReply(ctx.Err())
	}}
	for name, agent := range map[string]*runlet.Agent{
		"fails": {Model: failing}, "stops": {Model: stopping, Tools: []runlet.Tool{approval}}, "blocks": {Model: blocking},
	} {
		if err := mcp.AddAgent(s, mcp.AgentTool{Agent: agent, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	cs := serveClient(t, s, nil)
	prompt := map[string]any{"prompt": "go"}
	if out, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: "fails", Arguments: prompt}); !isErr || !strings.Contains(out, "model exploded") {
		t.Errorf("failing agent: %q, %v", out, isErr)
	}
	if out, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: "stops", Arguments: prompt}); !isErr || !strings.Contains(out, "approval of delete") {
		t.Errorf("interrupted agent: %q, %v", out, isErr)
	}

	// Cancelling the request cancels the run.
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "blocks", Arguments: prompt})
		errc <- err
	}()
	<-entered
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	select {
	case err := <-blocked:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the run saw %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run was not cancelled")
	}
}

// A panic in the served agent (its model, say) is an error result, not
// the end of the server.
func TestAddAgentPanic(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	panicky := &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply { panic("model bug") }}
	for name, m := range map[string]runlet.Model{"panics": panicky, "works": runlettest.NewModel(runlettest.TextReply("fine"))} {
		if err := mcp.AddAgent(s, mcp.AgentTool{Agent: &runlet.Agent{Model: m}, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	cs := serveClient(t, s, nil)
	if out, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: "panics", Arguments: map[string]any{"prompt": "go"}}); !isErr || out != "The agent failed: it crashed (panic: model bug)." {
		t.Errorf("panicking agent: %q, %v", out, isErr)
	}
	if out, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: "works", Arguments: map[string]any{"prompt": "go"}}); isErr || out != "fine" {
		t.Errorf("after the panic: %q, %v", out, isErr)
	}
}

func TestAddTools(t *testing.T) {
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	slow := runlet.NewTool("slow", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, runlet.WithToolTimeout(time.Millisecond))
	panics := runlet.NewTool("panics", "Panics.", func(context.Context, struct{}) (string, error) { panic("oops") })
	if err := mcp.AddTools(s, weather(), slow, panics); err != nil {
		t.Fatal(err)
	}
	cs := serveClient(t, s, nil)
	for _, tc := range []struct {
		name, args, want string
		isErr            bool
	}{
		{"get_weather", `{"city":"Paris"}`, "sunny", false},
		{"get_weather", `{"city":"Rome"}`, "Error: no weather for Rome", true},
		{"get_weather", `{"town":"Paris"}`, "Error: invalid arguments for get_weather", true},
		{"slow", `{}`, "Error: the tool timed out after 1ms.", true},
		{"panics", `{}`, "Error: the tool crashed (panic: oops).", true},
	} {
		out, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: tc.name, Arguments: json.RawMessage(tc.args)})
		if isErr != tc.isErr || !strings.Contains(out, tc.want) {
			t.Errorf("%s %s = %q (error %v), want %q", tc.name, tc.args, out, isErr, tc.want)
		}
	}

	approval := runlet.NewTool("delete", "Deletes.", func(context.Context, struct{}) (string, error) { return "", nil }, runlet.WithApproval())
	array := arrayTool{}
	for _, bad := range []runlet.Tool{approval, array, nil} {
		if err := mcp.AddTools(s, bad); err == nil {
			t.Errorf("AddTools(%v): want an error", bad)
		}
	}
}

// Served tools run through the Runtime's executor: its output cap (64 KiB
// by default, or the Runtime's), its timeout, and the grace period after
// which a tool that ignores its context is abandoned.
func TestAddToolsExecutor(t *testing.T) {
	huge := runlet.NewTool("huge", "Returns 1 MiB.", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("x", 1<<20), nil
	})
	hugePanic := runlet.NewTool("huge_panic", "Panics with 1 MiB.", func(context.Context, struct{}) (string, error) {
		panic(strings.Repeat("p", 1<<20))
	})
	release, done := make(chan struct{}), make(chan struct{})
	stubborn := runlet.NewTool("stubborn", "Ignores its context.", func(context.Context, struct{}) (string, error) {
		defer close(done)
		<-release
		return "late", nil
	})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		rt         *runlet.Runtime
		tool, want string
		maxLen     int
	}{
		{nil, "huge", "[output truncated: showing 65536 of 1048576 bytes]", 65536 + 64},
		{runlet.NewRuntime(runlet.WithMaxToolOutput(100), runlet.WithLogger(quiet)), "huge", "[output truncated: showing 100 of 1048576 bytes]", 164},
		{runlet.NewRuntime(runlet.WithMaxToolOutput(100), runlet.WithLogger(quiet)), "huge_panic", "Error: the tool crashed (panic: ppp", 164},
		{runlet.NewRuntime(runlet.WithToolTimeout(10 * time.Millisecond)), "stubborn", "Error: the tool timed out after 10ms.", 100},
	} {
		s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
		if err := mcp.AddToolsWith(s, tc.rt, huge, hugePanic, stubborn); err != nil {
			t.Fatal(err)
		}
		cs := serveClient(t, s, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // hang guard
		res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
		cancel()
		if err != nil {
			t.Errorf("%s: %v", tc.tool, err)
			continue
		}
		out, isErr := resultText(t, res), res.IsError
		if !strings.Contains(out, tc.want) || len(out) > tc.maxLen || isErr != (tc.tool != "huge") {
			t.Errorf("%s: %d bytes ending %q (error %v), want %q", tc.tool, len(out), out[max(0, len(out)-80):], isErr, tc.want)
		}
	}
	close(release)
	<-done
}

// Runlet calling Runlet: an agent served over Streamable HTTP, used by
// another agent through a Toolset.
func TestRunletCallsRunlet(t *testing.T) {
	inner := runlettest.NewModel(runlettest.TextReply("42"))
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	if err := mcp.AddAgent(s, mcp.AgentTool{Agent: &runlet.Agent{Name: "oracle", Model: inner}}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mcp.HTTPHandler(s, nil))
	defer hs.Close()
	defer hs.CloseClientConnections()
	ts := connectToolset(t, mcp.ServerConfig{URL: hs.URL}, mcp.WithPrefix("remote_"))
	outer := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "remote_oracle", `{"prompt":"The answer?"}`)),
		runlettest.TextReply("The oracle says 42."),
	)
	res, err := runlet.NewRuntime().Run(t.Context(), &runlet.Agent{Model: outer, Toolsets: []runlet.Toolset{ts}}, "Ask the oracle.")
	if err != nil {
		t.Fatal(err)
	}
	if r := toolResults(res); len(r) != 1 || r[0].Content != "42" || r[0].IsError {
		t.Fatalf("results %+v", r)
	}
	if got := inner.Requests()[0].Messages[0].Text(); got != "The answer?" {
		t.Errorf("inner agent got %q", got)
	}
	ts.Close()
}

// arrayTool takes an array, which MCP does not allow.
type arrayTool struct{}

func (arrayTool) Spec() runlet.ToolSpec {
	return runlet.ToolSpec{Name: "arr", InputSchema: &jsonschema.Schema{Type: "array"}}
}
func (arrayTool) Call(context.Context, json.RawMessage) (string, error) { return "", nil }
