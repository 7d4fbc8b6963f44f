package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
)

// ErrClosed is the error of a [Toolset] used after Close.
var ErrClosed = errors.New("mcp: toolset closed")

// maxBackoff caps the wait between two connection attempts.
const maxBackoff = 5 * time.Second

// WithRetry sets how often [Connect] and a [Toolset] try to (re)connect
// before giving up, and the wait before the second attempt, doubled before
// each next one (at most 5s). The default is 3 attempts, 200ms apart at
// first.
func WithRetry(attempts int, backoff time.Duration) Option {
	return func(c *config) {
		c.attempts, c.backoff = max(attempts, 1), max(backoff, 0)
	}
}

// WithToolsChanged calls f, on the SDK's goroutine, each time the server
// says its tool list changed (notifications/tools/list_changed). The
// Toolset refreshes its list on its next use whether or not f is set; f is
// for logging, or for tests that wait for the notification.
func WithToolsChanged(f func()) Option {
	return func(c *config) { c.onChanged = f }
}

// WithClientInfo sets the name and version the client gives the server;
// the default is "runlet".
func WithClientInfo(impl *sdkmcp.Implementation) Option {
	return func(c *config) { c.client = impl }
}

// Toolset is a live connection to one MCP server whose tools a runlet.Agent
// uses through its Toolsets field:
//
//	ts, err := mcp.Connect(ctx, mcp.ServerConfig{URL: "https://mcp.example.com/mcp",
//		Headers: map[string]string{"Authorization": "Bearer " + token}}, mcp.WithPrefix("example_"))
//	if err != nil { ... }
//	defer ts.Close()
//	agent := &runlet.Agent{Model: m, Toolsets: []runlet.Toolset{ts}}
//
// It keeps the tool list current: when the server sends
// notifications/tools/list_changed, the list is fetched again before the
// next model call. A tool the server no longer offers gives the model an
// error result if it still calls it.
//
// It reconnects: when the server goes away (the process exits, the HTTP
// session expires, the connection breaks), the next call or model turn
// connects again, with bounded retries and backoff (see [WithRetry]), and
// fetches the tool list again. A call in flight when the connection breaks
// fails with an error result that tells the model so; it is not retried,
// since the server may have acted on it.
//
// A Toolset is safe for concurrent use by many runs. Close it when done.
type Toolset struct {
	cfg    ServerConfig
	c      config
	client *sdkmcp.Client
	name   string

	dialMu sync.Mutex // one (re)connection at a time

	mu      sync.Mutex
	session *sdkmcp.ClientSession // nil when disconnected
	tools   []runlet.Tool
	names   map[string]bool // MCP names of tools
	stale   bool            // the server said its tools changed
	info    *sdkmcp.Implementation
	closed  bool
	watches sync.WaitGroup
}

var _ runlet.Toolset = (*Toolset)(nil)

// Connect connects to the server described by cfg and lists its tools,
// trying again as [WithRetry] says. Options such as [WithPrefix] and
// [WithFilter] apply to every list the Toolset fetches.
func Connect(ctx context.Context, cfg ServerConfig, opts ...Option) (*Toolset, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ts := &Toolset{cfg: cfg, c: newConfig(opts), name: cfg.displayName()}
	impl := ts.c.client
	if impl == nil {
		impl = &sdkmcp.Implementation{Name: "runlet", Version: "v0"}
	}
	ts.client = sdkmcp.NewClient(impl, &sdkmcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdkmcp.ToolListChangedRequest) { ts.changed() },
	})
	if _, err := ts.connect(ctx); err != nil {
		return nil, err
	}
	return ts, nil
}

// Tools returns the server's current tools: the list fetched last, or a
// new one if the server said its tools changed or the connection was lost.
// When the server cannot be reached it returns the last list, whose calls
// then fail with an error result the model can act on; it fails only after
// Close.
func (ts *Toolset) Tools(ctx context.Context) ([]runlet.Tool, error) {
	ts.mu.Lock()
	s, stale, closed, tools := ts.session, ts.stale, ts.closed, ts.tools
	ts.stale = false
	ts.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case s == nil:
		if _, err := ts.connect(ctx); err != nil {
			return tools, nil
		}
	case stale:
		ts.refresh(ctx, s)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.tools, nil
}

// ServerInfo is the name and version the server gave on the latest
// connection; nil if it gave none.
func (ts *Toolset) ServerInfo() *sdkmcp.Implementation {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.info
}

// Close closes the connection and ends the Toolset's goroutines. Runs
// using it see ErrClosed from their next model call.
func (ts *Toolset) Close() error {
	ts.mu.Lock()
	if ts.closed {
		ts.mu.Unlock()
		return nil
	}
	ts.closed = true
	s := ts.session
	ts.session = nil
	ts.mu.Unlock()
	var err error
	if s != nil {
		err = s.Close()
	}
	ts.watches.Wait()
	return err
}

// changed marks the tool list stale.
func (ts *Toolset) changed() {
	ts.mu.Lock()
	ts.stale = true
	ts.mu.Unlock()
	if ts.c.onChanged != nil {
		ts.c.onChanged()
	}
}

// refresh fetches the tool list again on s; on failure the list stays as
// it was and, if the connection broke, the next use reconnects.
func (ts *Toolset) refresh(ctx context.Context, s *sdkmcp.ClientSession) {
	tools, names, err := listTools(ctx, s, &ts.c, ts)
	if err != nil {
		ts.mu.Lock()
		ts.stale = true
		ts.mu.Unlock()
		if ctx.Err() == nil && brokenConn(err) {
			ts.lost(s)
		}
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.session == s {
		ts.tools, ts.names = tools, names
	}
}

// connect returns a connected session: the current one if there is one
// (another call may have reconnected meanwhile), else a new one made with
// retries, whose tool list replaces the old.
func (ts *Toolset) connect(ctx context.Context) (*sdkmcp.ClientSession, error) {
	ts.dialMu.Lock()
	defer ts.dialMu.Unlock()
	ts.mu.Lock()
	s, closed := ts.session, ts.closed
	ts.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if s != nil {
		return s, nil
	}
	var lastErr error
	wait := ts.c.backoff
	for attempt := range ts.c.attempts {
		if attempt > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			wait = min(2*wait, maxBackoff)
		}
		s, err := ts.dial(ctx)
		if err == nil || errors.Is(err, ErrClosed) {
			return s, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lastErr = ts.cfg.redact(err)
	}
	return nil, fmt.Errorf("mcp: connecting to %s (%d attempts): %w", ts.name, ts.c.attempts, lastErr)
}

// dial connects once and lists the tools, then makes the session the
// current one. The connection gets a context of its own, so that it
// outlives ctx (the SSE transport ties its event stream to the context it
// connects with); ctx bounds only the attempt.
func (ts *Toolset) dial(ctx context.Context) (*sdkmcp.ClientSession, error) {
	connCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	s, err := ts.client.Connect(connCtx, ts.cfg.transport(), nil)
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	tools, names, err := listTools(ctx, s, &ts.c, ts)
	if !stop() && err == nil {
		err = ctx.Err() // ctx ended: the connection was cancelled with it
	}
	if err == nil {
		err = ts.install(s, tools, names, cancel)
	}
	if err != nil {
		s.Close()
		cancel()
		return nil, err
	}
	return s, nil
}

// install makes s the current session and starts its watcher, which calls
// cancel when s ends.
func (ts *Toolset) install(s *sdkmcp.ClientSession, tools []runlet.Tool, names map[string]bool, cancel context.CancelFunc) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return ErrClosed
	}
	ts.session, ts.tools, ts.names, ts.stale = s, tools, names, false
	if ir := s.InitializeResult(); ir != nil {
		ts.info = ir.ServerInfo
	}
	ts.watches.Add(1)
	go ts.watch(s, cancel)
	return nil
}

// watch notices a session the server ended, so that the next use
// reconnects, and reaps it (a subprocess is waited for).
func (ts *Toolset) watch(s *sdkmcp.ClientSession, cancel context.CancelFunc) {
	defer ts.watches.Done()
	defer cancel()
	_ = s.Wait()
	ts.mu.Lock()
	if ts.session == s {
		ts.session = nil
	}
	ts.mu.Unlock()
	_ = s.Close()
}

// lost drops s after a call on it failed for want of a connection.
func (ts *Toolset) lost(s *sdkmcp.ClientSession) {
	ts.mu.Lock()
	if ts.session == s {
		ts.session = nil
	}
	ts.mu.Unlock()
	_ = s.Close()
}

// callTool calls a tool on the current session, reconnecting first if the
// connection is gone. A call the server rejected for an unknown session
// (its HTTP session expired, or it restarted) never ran: it is sent again
// once on a new session.
func (ts *Toolset) callTool(ctx context.Context, p *sdkmcp.CallToolParams) (*sdkmcp.CallToolResult, error) {
	for retried := false; ; retried = true {
		s, err := ts.live(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		res, err := s.CallTool(ctx, p)
		if err == nil || ctx.Err() != nil || !brokenConn(err) {
			return res, ts.cfg.redact(err)
		}
		ts.lost(s)
		if errors.Is(err, sdkmcp.ErrSessionMissing) && !retried {
			continue
		}
		err = ts.cfg.redact(err)
		return nil, &callError{err: err, msg: fmt.Sprintf(
			"The connection to the MCP server %s broke during the call to %s (%v); the call may or may not have taken effect. The next call reconnects.",
			ts.name, p.Name, err)}
	}
}

// live returns a session offering the tool, connecting first if needed.
func (ts *Toolset) live(ctx context.Context, tool string) (*sdkmcp.ClientSession, error) {
	ts.mu.Lock()
	s, closed := ts.session, ts.closed
	ts.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if s == nil {
		var err error
		if s, err = ts.connect(ctx); err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return nil, err
			}
			return nil, &callError{err: err, msg: fmt.Sprintf(
				"The MCP server %s is unavailable (%v). Try again later, or go on without its tools.", ts.name, err)}
		}
	}
	ts.mu.Lock()
	known := ts.names[tool]
	ts.mu.Unlock()
	if !known {
		return nil, &callError{msg: fmt.Sprintf("The tool %s is no longer offered by the MCP server %s.", tool, ts.name)}
	}
	return s, nil
}

// brokenConn reports whether err means the connection is unusable, as
// opposed to an error the server answered with.
func brokenConn(err error) bool {
	var wire *jsonrpc.Error
	return !errors.As(err, &wire)
}

// callError is an error whose message is written for the model.
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }
