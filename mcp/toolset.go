package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
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
// next model call; a notification read before a tool's result is in
// effect for the model call that follows that result. A tool the server
// no longer offers gives the model an error result if it still calls it.
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

	dialMu sync.Mutex    // one (re)connection at a time
	listMu chan struct{} // one Tools at a time: a caller waits for a refresh in progress

	mu      sync.Mutex
	session *sdkmcp.ClientSession // nil when disconnected
	guard   *guard                // session's
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
	ts := &Toolset{cfg: cfg, c: newConfig(opts), name: cleanText(cfg.displayName(), maxShownName), listMu: make(chan struct{}, 1)}
	impl := ts.c.client
	if impl == nil {
		impl = &sdkmcp.Implementation{Name: "runlet", Version: "v0"}
	}
	ts.client = sdkmcp.NewClient(impl, &sdkmcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdkmcp.ToolListChangedRequest) {
			ts.markStale() // the guard did it already for the connections it watches
			if ts.c.onChanged != nil {
				ts.c.onChanged()
			}
		},
	})
	if _, err := ts.connect(ctx); err != nil {
		return nil, err
	}
	return ts, nil
}

// Tools returns the server's current tools: the list fetched last, or a
// new one if the server said its tools changed or the connection was lost.
// A notifications/tools/list_changed read before a tool's result is in
// effect for the next call of Tools, which the runtime makes before its
// next model call. When the server cannot be reached it returns the last
// list, whose calls then fail with an error result the model can act on;
// it fails only after Close.
func (ts *Toolset) Tools(ctx context.Context) ([]runlet.Tool, error) {
	// Callers take turns, so that one that comes while another refreshes
	// the list gets the new list, not the old one.
	select {
	case ts.listMu <- struct{}{}:
		defer func() { <-ts.listMu }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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

// markStale marks the tool list stale: the next Tools fetches it again.
func (ts *Toolset) markStale() {
	ts.mu.Lock()
	ts.stale = true
	ts.mu.Unlock()
}

// refresh fetches the tool list again on s, within Limits.ListTimeout; on
// failure the list stays as it was and, if the connection broke, the next
// use reconnects.
func (ts *Toolset) refresh(ctx context.Context, s *sdkmcp.ClientSession) {
	lctx, cancel := context.WithTimeout(ctx, ts.c.limits.ListTimeout)
	defer cancel()
	tools, names, err := listTools(lctx, s, &ts.c, ts.name, ts)
	if err != nil && lctx.Err() != nil && ctx.Err() == nil {
		err = &LimitError{Server: ts.name, Limit: "ListTimeout", Value: int64(ts.c.limits.ListTimeout)}
	}
	if err != nil {
		ts.c.logger.Warn("mcp: refreshing the tool list", "server", ts.name, "error", ts.cfg.redact(err))
		var le *LimitError
		switch {
		case ctx.Err() != nil:
			ts.markStale()
		case errors.As(err, &le) && le.Limit == "ListTimeout", brokenConn(err):
			// A server that does not answer a list in time is treated as
			// gone: the next use connects again.
			ts.markStale()
			ts.lost(s)
		}
		// Otherwise the server answered (an error, or too many pages or
		// tools): asking again before it says its tools changed would get
		// the same answer, so the list stays as it was until then.
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
		var auth *AuthError
		if errors.As(err, &auth) {
			return nil, err // asking again gets the same answer
		}
		lastErr = ts.cfg.redact(err)
	}
	return nil, fmt.Errorf("mcp: connecting to %s (%d attempts): %w", ts.name, ts.c.attempts, lastErr)
}

// dial connects once and lists the tools, within Limits.ConnectTimeout,
// then makes the session the current one. The connection gets a context of
// its own, so that it outlives ctx (the SSE transport ties its event stream
// to the context it connects with); ctx bounds only the attempt.
func (ts *Toolset) dial(ctx context.Context) (*sdkmcp.ClientSession, error) {
	ctx, cancelAttempt := context.WithTimeout(ctx, ts.c.limits.ConnectTimeout)
	defer cancelAttempt()
	g := &guard{server: ts.name, maxBytes: ts.c.limits.MaxMessageBytes, changed: ts.markStale}
	connCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	s, err := ts.client.Connect(connCtx, g.transport(ts.cfg.transport()), nil)
	if err != nil {
		stop()
		cancel()
		return nil, ts.dialError(ctx, g, err)
	}
	tools, names, err := listTools(ctx, s, &ts.c, ts.name, ts)
	if !stop() && err == nil {
		err = ctx.Err() // ctx ended: the connection was cancelled with it
	}
	if err == nil {
		err = ts.install(s, tools, names, g, cancel)
	}
	if err != nil {
		s.Close()
		cancel()
		return nil, ts.dialError(ctx, g, err)
	}
	return s, nil
}

// dialError is the error of a failed connection attempt: an AuthError
// when the server answered 401 or 403, a LimitError when the attempt took
// longer than Limits.ConnectTimeout.
func (ts *Toolset) dialError(ctx context.Context, g *guard, err error) error {
	if code := g.status.Load(); code != 0 {
		return &AuthError{Server: ts.name, StatusCode: int(code)}
	}
	if g.tooBig.Load() {
		return g.tooLarge()
	}
	if ctx.Err() != nil { // connect returns ctx's error if the caller's ended
		return &LimitError{Server: ts.name, Limit: "ConnectTimeout", Value: int64(ts.c.limits.ConnectTimeout)}
	}
	return err
}

// install makes s the current session and starts its watcher, which calls
// cancel when s ends.
func (ts *Toolset) install(s *sdkmcp.ClientSession, tools []runlet.Tool, names map[string]bool, g *guard, cancel context.CancelFunc) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return ErrClosed
	}
	// stale stays as it is: a list_changed read while the list was
	// fetched may not be in it.
	ts.session, ts.guard, ts.tools, ts.names = s, g, tools, names
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
	shown := cleanText(p.Name, maxShownName)
	for retried := false; ; retried = true {
		s, g, err := ts.live(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		res, err := s.CallTool(ctx, p)
		if err == nil || ctx.Err() != nil {
			return res, ts.cfg.redact(err)
		}
		if code := g.status.Swap(0); code != 0 {
			ts.lost(s) // the next call connects again, and is told the same
			return nil, &AuthError{Server: ts.name, StatusCode: int(code)}
		}
		if g.tooBig.Swap(false) {
			ts.lost(s) // over HTTP, a message too large ends the connection
			return nil, g.tooLarge()
		}
		if !brokenConn(err) {
			return res, ts.cfg.redact(err)
		}
		ts.lost(s)
		// A call that never reached the server (the session expired, or
		// the server could not be dialled) is sent once more on a new
		// session.
		if (errors.Is(err, sdkmcp.ErrSessionMissing) || dialFailed(err)) && !retried {
			continue
		}
		err = ts.cfg.redact(err)
		return nil, &callError{err: err, msg: fmt.Sprintf(
			"The connection to the MCP server %s broke during the call to %s (%v); the call may or may not have taken effect. The next call reconnects.",
			ts.name, shown, err)}
	}
}

// live returns a session offering the tool, and its guard, connecting
// first if needed.
func (ts *Toolset) live(ctx context.Context, tool string) (*sdkmcp.ClientSession, *guard, error) {
	ts.mu.Lock()
	s, closed := ts.session, ts.closed
	ts.mu.Unlock()
	if closed {
		return nil, nil, ErrClosed
	}
	if s == nil {
		if _, err := ts.connect(ctx); err != nil {
			var auth *AuthError
			if ctx.Err() != nil || errors.Is(err, ErrClosed) || errors.As(err, &auth) {
				return nil, nil, err
			}
			return nil, nil, &callError{err: err, msg: fmt.Sprintf(
				"The MCP server %s is unavailable (%v). Try again later, or go on without its tools.", ts.name, err)}
		}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.session == nil {
		return nil, nil, &callError{msg: fmt.Sprintf("The connection to the MCP server %s broke. The next call reconnects.", ts.name)}
	}
	if !ts.names[tool] {
		return nil, nil, &callError{msg: fmt.Sprintf("The tool %s is no longer offered by the MCP server %s.", cleanText(tool, maxShownName), ts.name)}
	}
	return ts.session, ts.guard, nil
}

// brokenConn reports whether err means the connection is unusable, as
// opposed to an error the server answered with or a result refused for
// its size. A request the transport could not deliver (the server could
// not be dialled, or a proxy answered 502, 503 or 504) counts as broken:
// the next call connects again.
func brokenConn(err error) bool {
	var limit *LimitError
	if errors.As(err, &limit) {
		return false
	}
	var wire *jsonrpc.Error
	return !errors.As(err, &wire) || wire.Code == codeRejected
}

// codeRejected is the code of the SDK's error for a request its transport
// could not deliver (jsonrpc2.ErrRejected, which it does not export).
const codeRejected = -32005

// dialFailed reports whether err is a failure to reach the server at all,
// so that the request was not sent.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// callError is an error whose message is written for the model.
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }
