package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/runlettest"
)

func TestMain(m *testing.M) {
	if os.Getenv(subprocessEnv) != "" {
		serveSubprocess()
		return
	}
	goleak.VerifyTestMain(m)
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city, such as Paris"`
}

// server is an in-process MCP server with a few tools, and what its
// blocking tool saw.
type server struct {
	*sdkmcp.Server
	started   chan struct{} // a call of "wait" began
	cancelled chan error    // a call of "wait" saw its context end, with this cause
}

// newSession starts an MCP server with the test tools and returns a client
// session connected to it; both close at test cleanup. A pageSize of 0 is the
// SDK's default.
func newSession(t *testing.T, pageSize int) (*sdkmcp.ClientSession, *server) {
	t.Helper()
	srv := newServer(pageSize)
	return connect(t, srv.Server), srv
}

// newServer is an MCP server with the test tools.
func newServer(pageSize int) *server {
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "test-server", Version: "v0.0.1"}, &sdkmcp.ServerOptions{PageSize: pageSize})
	srv := &server{Server: s, started: make(chan struct{}, 8), cancelled: make(chan error, 8)}

	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "get_weather", Description: "Returns the weather in a city."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in weatherIn) (*sdkmcp.CallToolResult, any, error) {
			if in.City != "Paris" {
				return nil, nil, fmt.Errorf("no weather for %q", in.City)
			}
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "Paris: sunny, 18°C"}}}, nil, nil
		})
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "fail", Description: "Always fails."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the disk is full")
		})
	object := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&sdkmcp.Tool{Name: "snapshot", Title: "Take a snapshot", InputSchema: object},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{
				&sdkmcp.TextContent{Text: "Here it is:"},
				&sdkmcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)},
				&sdkmcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 10)},
				&sdkmcp.ResourceLink{Name: "report.pdf", URI: "file:///tmp/report.pdf"},
				&sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "buy milk"}},
				&sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: "file:///logo.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
			}}, nil
		})
	s.AddTool(&sdkmcp.Tool{Name: "stats.get", Description: "Returns statistics.", InputSchema: object},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return &sdkmcp.CallToolResult{StructuredContent: map[string]any{"count": 3, "ok": true}}, nil
		})
	s.AddTool(&sdkmcp.Tool{Name: "wait", Description: "Blocks until cancelled.", InputSchema: object},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			srv.started <- struct{}{}
			<-ctx.Done()
			srv.cancelled <- ctx.Err()
			return nil, ctx.Err()
		})
	return srv
}

func toolsByName(t *testing.T, tools []runlet.Tool) map[string]runlet.Tool {
	t.Helper()
	m := make(map[string]runlet.Tool, len(tools))
	for _, tl := range tools {
		m[tl.Spec().Name] = tl
	}
	return m
}

func names(tools []runlet.Tool) []string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Spec().Name)
	}
	slices.Sort(n)
	return n
}

func TestToolsSpecs(t *testing.T) {
	// A page size of 2 makes the listing take three pages.
	cs, _ := newSession(t, 2)
	tools, err := mcp.Tools(t.Context(), cs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(tools), []string{"fail", "get_weather", "snapshot", "stats_get", "wait"}; !slices.Equal(got, want) {
		t.Fatalf("names = %v, want %v", got, want)
	}
	byName := toolsByName(t, tools)

	w := byName["get_weather"].Spec()
	if w.Description != "Returns the weather in a city." {
		t.Errorf("description = %q", w.Description)
	}
	if w.InputSchema == nil || w.InputSchema.Type != "object" {
		t.Fatalf("schema = %+v, want an object", w.InputSchema)
	}
	city := w.InputSchema.Properties["city"]
	if city == nil || city.Type != "string" || city.Description != "the city, such as Paris" {
		t.Errorf("city property = %+v", city)
	}
	if !slices.Equal(w.InputSchema.Required, []string{"city"}) {
		t.Errorf("required = %v", w.InputSchema.Required)
	}
	// The schema marshals to what a provider needs.
	b, err := json.Marshal(w.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"city":{"type":"string","description":"the city, such as Paris"}`) {
		t.Errorf("schema JSON = %s", b)
	}

	// Without a description the title describes the tool.
	if d := byName["snapshot"].Spec().Description; d != "Take a snapshot" {
		t.Errorf("snapshot description = %q, want its title", d)
	}
	if s := byName["snapshot"].Spec().InputSchema; s == nil || s.Type != "object" {
		t.Errorf("snapshot schema = %+v", s)
	}
	// No policy by default.
	if p := runlet.PolicyOf(byName["wait"]); p != (runlet.ToolPolicy{}) {
		t.Errorf("policy = %+v, want zero", p)
	}
}

func TestCall(t *testing.T) {
	cs, _ := newSession(t, 0)
	tools, err := mcp.Tools(t.Context(), cs)
	if err != nil {
		t.Fatal(err)
	}
	byName := toolsByName(t, tools)
	tests := []struct {
		tool, args string
		want       string
		wantErr    string // an *mcp.ToolError with this message
		wantAnyErr string // some other error containing this
	}{
		{tool: "get_weather", args: `{"city":"Paris"}`, want: "Paris: sunny, 18°C"},
		{tool: "get_weather", args: `{"city":"Atlantis"}`, wantErr: `no weather for "Atlantis"`},
		// The server validates the arguments and reports a violation as a tool error.
		{tool: "get_weather", args: `{"town":"Paris"}`, wantErr: `validating "arguments": validating root: unexpected additional properties ["town"]`},
		{tool: "fail", args: `{}`, wantErr: "the disk is full"},
		{tool: "fail", args: ``, wantErr: "the disk is full"},
		{tool: "fail", args: `null`, wantErr: "the disk is full"},
		{tool: "snapshot", args: `{}`, want: "Here it is:\n[image image/png, 1234 bytes]\n[audio audio/wav, 10 bytes]\n" +
			"[resource link report.pdf: file:///tmp/report.pdf]\n[resource file:///notes.txt]\nbuy milk\n" +
			"[resource file:///logo.bin application/octet-stream, 3 bytes]"},
		{tool: "stats_get", args: `{}`, want: `{"count":3,"ok":true}`},
		{tool: "snapshot", args: `{`, wantAnyErr: "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			got, err := byName[tt.tool].Call(t.Context(), json.RawMessage(tt.args))
			switch {
			case tt.wantErr != "":
				var te *mcp.ToolError
				if !errors.As(err, &te) {
					t.Fatalf("err = %v (%T), want *mcp.ToolError", err, err)
				}
				if te.Error() != tt.wantErr || te.Text != tt.wantErr || te.Tool != tt.tool || te.Result == nil || !te.Result.IsError {
					t.Errorf("err = %+v, want message %q", te, tt.wantErr)
				}
			case tt.wantAnyErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantAnyErr) {
					t.Errorf("err = %v, want one containing %q", err, tt.wantAnyErr)
				}
			case err != nil:
				t.Fatalf("err = %v", err)
			case got != tt.want:
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCallRemovedTool(t *testing.T) {
	// The server dropped a tool after the listing: a protocol error, not a
	// ToolError.
	cs, srv := newSession(t, 0)
	tools, err := mcp.Tools(t.Context(), cs, mcp.WithFilter(func(t *sdkmcp.Tool) bool { return t.Name == "fail" }))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 {
		t.Fatalf("tools = %v, want [fail]", names(tools))
	}
	srv.RemoveTools("fail")
	_, err = tools[0].Call(t.Context(), json.RawMessage(`{}`))
	var te *mcp.ToolError
	if err == nil || errors.As(err, &te) || !strings.HasPrefix(err.Error(), "mcp: calling fail: ") || !strings.Contains(err.Error(), "fail") {
		t.Errorf("err = %v, want a protocol error", err)
	}
}

func TestSessionClosed(t *testing.T) {
	cs, _ := newSession(t, 0)
	tools, err := mcp.Tools(t.Context(), cs)
	if err != nil {
		t.Fatal(err)
	}
	cs.Close()
	_, err = tools[0].Call(t.Context(), json.RawMessage(`{}`))
	var te *mcp.ToolError
	if err == nil || errors.As(err, &te) || !strings.HasPrefix(err.Error(), "mcp: calling ") {
		t.Errorf("after Close: err = %v, want a protocol error", err)
	}
	if _, err := mcp.Tools(t.Context(), cs); err == nil || !strings.HasPrefix(err.Error(), "mcp: listing tools: ") {
		t.Errorf("Tools after Close: err = %v", err)
	}
	if _, err := mcp.Tools(t.Context(), nil); err == nil {
		t.Error("Tools(nil): want an error")
	}
}

func TestOptions(t *testing.T) {
	cs, _ := newSession(t, 0)
	tools, err := mcp.Tools(t.Context(), cs,
		mcp.WithPrefix("srv."),
		mcp.WithFilter(func(t *sdkmcp.Tool) bool { return t.Name != "fail" }),
		mcp.WithPolicy(func(t *sdkmcp.Tool) runlet.ToolPolicy {
			if t.Name == "wait" {
				return runlet.ToolPolicy{Timeout: time.Second, RequiresApproval: true}
			}
			return runlet.ToolPolicy{}
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(tools), []string{"srv_get_weather", "srv_snapshot", "srv_stats_get", "srv_wait"}; !slices.Equal(got, want) {
		t.Fatalf("names = %v, want %v", got, want)
	}
	byName := toolsByName(t, tools)
	if p := runlet.PolicyOf(byName["srv_wait"]); p != (runlet.ToolPolicy{Timeout: time.Second, RequiresApproval: true}) {
		t.Errorf("srv_wait policy = %+v", p)
	}
	if p := runlet.PolicyOf(byName["srv_get_weather"]); p != (runlet.ToolPolicy{}) {
		t.Errorf("srv_get_weather policy = %+v", p)
	}
	// The prefixed tool still calls the server's tool by its own name.
	got, err := byName["srv_stats_get"].Call(t.Context(), nil)
	if err != nil || got != `{"count":3,"ok":true}` {
		t.Errorf("srv_stats_get = %q, %v", got, err)
	}
}

func TestCancellation(t *testing.T) {
	cs, srv := newSession(t, 0)
	tools, err := mcp.Tools(t.Context(), cs, mcp.WithFilter(func(t *sdkmcp.Tool) bool { return t.Name == "wait" }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := tools[0].Call(ctx, json.RawMessage(`{}`))
		done <- err
	}()
	<-srv.started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second): // a hang guard, generous for a loaded machine
		t.Fatal("Call did not return after cancellation")
	}
	// The server's handler saw its context cancelled too.
	select {
	case err := <-srv.cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("server saw %v", err)
		}
	case <-time.After(30 * time.Second): // a hang guard, generous for a loaded machine
		t.Fatal("the server's handler was not cancelled")
	}
}

func TestRuntimeEndToEnd(t *testing.T) {
	cs, srv := newSession(t, 0)
	tools, err := mcp.Tools(t.Context(), cs, mcp.WithPrefix("demo_"),
		mcp.WithPolicy(func(t *sdkmcp.Tool) runlet.ToolPolicy {
			if t.Name == "wait" {
				return runlet.ToolPolicy{Timeout: 50 * time.Millisecond}
			}
			return runlet.ToolPolicy{}
		}))
	if err != nil {
		t.Fatal(err)
	}
	model := runlettest.NewModel(
		runlettest.ToolCallReply(
			runlettest.Call("c1", "demo_get_weather", `{"city":"Paris"}`),
			runlettest.Call("c2", "demo_fail", `{}`),
			runlettest.Call("c3", "demo_wait", `{}`),
		),
		runlettest.TextReply("It is sunny in Paris."),
	)
	agent := &runlet.Agent{Name: "mcp", Model: model, Tools: tools}
	res, err := runlet.NewRuntime().Run(t.Context(), agent, "Weather in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "It is sunny in Paris." {
		t.Errorf("output = %q", res.Output)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var specNames []string
	for _, s := range reqs[0].Tools {
		specNames = append(specNames, s.Name)
	}
	slices.Sort(specNames)
	if want := []string{"demo_fail", "demo_get_weather", "demo_snapshot", "demo_stats_get", "demo_wait"}; !slices.Equal(specNames, want) {
		t.Errorf("tool specs = %v, want %v", specNames, want)
	}
	results := map[string]runlet.ToolResultPart{}
	for _, m := range reqs[1].Messages {
		for _, p := range m.Parts {
			if r, ok := p.(runlet.ToolResultPart); ok {
				results[r.CallID] = r
			}
		}
	}
	want := map[string]runlet.ToolResultPart{
		"c1": {CallID: "c1", Name: "demo_get_weather", Content: "Paris: sunny, 18°C"},
		"c2": {CallID: "c2", Name: "demo_fail", Content: "Error: the disk is full", IsError: true},
		"c3": {CallID: "c3", Name: "demo_wait", Content: "Error: the tool timed out after 50ms.", IsError: true},
	}
	for id, w := range want {
		if got := results[id]; !reflect.DeepEqual(got, w) {
			t.Errorf("result %s = %+v, want %+v", id, got, w)
		}
	}
	// The timeout cancelled the request on the server.
	select {
	case <-srv.cancelled:
	case <-time.After(30 * time.Second): // a hang guard, generous for a loaded machine
		t.Fatal("the server's handler was not cancelled by the tool timeout")
	}
}

// connect serves s over in-memory transports and returns a client session;
// both close at test cleanup.
func connect(t *testing.T, s *sdkmcp.Server) *sdkmcp.ClientSession {
	t.Helper()
	st, ct := sdkmcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "v0.0.1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		ss.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func TestNames(t *testing.T) {
	long := "search." + strings.Repeat("x", 100)
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "names", Version: "v0"}, nil)
	for _, name := range []string{"files.read", "files_read", long} {
		s.AddTool(&sdkmcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
				return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "called " + req.Params.Name}}}, nil
			})
	}
	cs := connect(t, s)

	// Of two tools whose names become the same, the one listed first (the
	// server lists them by name) keeps it; the other is left out, with a
	// warning.
	var log strings.Builder
	tools, err := mcp.Tools(t.Context(), cs, mcp.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), `tool left out" server=names tool=files_read reason="its name becomes files_read, as the name of files.read listed before it does"`) {
		t.Errorf("log = %s", log.String())
	}
	byName := toolsByName(t, tools)
	if len(byName) != 2 || byName["files_read"] == nil {
		t.Fatalf("names = %v", names(tools))
	}
	// Each tool calls the server by its MCP name.
	for name, tl := range byName {
		if len(name) > mcp.MaxNameLen {
			t.Errorf("%q is longer than %d bytes", name, mcp.MaxNameLen)
		}
		got, err := tl.Call(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "called " + long, false: "called files.read"}[name != "files_read"]; got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}
