package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions bound what the clients of [HTTPHandler] can make the server
// do. Zero fields (and a nil *HTTPOptions) take the defaults given below.
type HTTPOptions struct {
	// AllowedOrigins lists the web origins ("https://app.example.com":
	// scheme, host and port if not the default) whose pages may call the
	// server. As the MCP specification requires against DNS rebinding, a
	// request with an Origin header is refused with 403 Forbidden unless
	// its origin is listed or is on loopback (http://localhost:6274,
	// http://127.0.0.1:8080, http://[::1]); "*" allows every origin, "null"
	// the opaque one. Requests without Origin, as non-browser clients send
	// them, are not affected. (The SDK's own check also refuses a request
	// that reaches a loopback address with a Host header that is not
	// loopback.)
	AllowedOrigins []string
	// MaxSessions bounds the sessions open at once; a request that would
	// start one more gets 503 Service Unavailable. Default 100; negative:
	// no limit.
	MaxSessions int
	// SessionIdleTimeout closes a session that has received no request for
	// this long (a request being answered keeps it open); its client must
	// start a new one. Default 10 minutes; negative: never.
	SessionIdleTimeout time.Duration
	// MaxRequestBytes bounds a request's body: a larger one is refused
	// with 413 Content Too Large before it is read whole. Default 1 MiB;
	// negative: no limit.
	MaxRequestBytes int64
	// BodyTimeout bounds the time to read a request's body, from the end
	// of its headers: a slower client gets 408 Request Timeout. (The time
	// to read the headers is the http.Server's ReadHeaderTimeout: set it.)
	// Default 30 seconds; negative: no limit.
	BodyTimeout time.Duration
	// WriteTimeout bounds each write of a response: a client that stops
	// reading its responses (a call's result, a stream's events) for this
	// long loses the connection, so the request ends rather than hold its
	// goroutine and data for ever. A stream with nothing to send is not
	// affected. Default 30 seconds; negative: no limit.
	WriteTimeout time.Duration
	// MaxConcurrent bounds the POST requests served at once, each until
	// its answer is sent (one more gets 503 Service Unavailable before its
	// body is read), and the tool calls running at once on the server,
	// whichever session they come from (one more gets a JSON-RPC error; a
	// call goes on after its client hung up, so the requests do not bound
	// the calls). Memory grows by about MaxConcurrent times MaxRequestBytes
	// (and what the calls use), whatever the clients send. Default 64;
	// negative: no limit.
	MaxConcurrent int
}

// Defaults of HTTPOptions.
const (
	defaultMaxSessions     = 100
	defaultSessionIdle     = 10 * time.Minute
	defaultMaxRequestBytes = 1 << 20
	defaultBodyTimeout     = 30 * time.Second
	defaultWriteTimeout    = 30 * time.Second
	defaultMaxConcurrent   = 64
)

// codeBusy is the JSON-RPC error code of a tool call refused because
// MaxConcurrent calls are running (-32000 to -32099: the implementation's).
const codeBusy = -32000

// withDefaults returns o with its zero fields set to the defaults.
func (o *HTTPOptions) withDefaults() HTTPOptions {
	var h HTTPOptions
	if o != nil {
		h = *o
	}
	orDefault := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	orDefault(&h.MaxSessions, defaultMaxSessions)
	orDefault(&h.MaxConcurrent, defaultMaxConcurrent)
	if h.SessionIdleTimeout == 0 {
		h.SessionIdleTimeout = defaultSessionIdle
	}
	if h.MaxRequestBytes == 0 {
		h.MaxRequestBytes = defaultMaxRequestBytes
	}
	if h.BodyTimeout == 0 {
		h.BodyTimeout = defaultBodyTimeout
	}
	if h.WriteTimeout == 0 {
		h.WriteTimeout = defaultWriteTimeout
	}
	return h
}

// HTTPHandler serves s over Streamable HTTP, as the SDK's
// StreamableHTTPHandler does, bounded by opts (nil: the defaults of
// [HTTPOptions]); mount it at the MCP endpoint, such as "/mcp". It adds a
// middleware to s that bounds its running tool calls. Serve it with an
// http.Server whose ReadHeaderTimeout is set, and put authentication in
// front of it for anything but loopback.
func HTTPHandler(s *sdkmcp.Server, opts *HTTPOptions) http.Handler {
	o := opts.withDefaults()
	h := &httpHandler{opts: o, server: s, origins: map[string]bool{}, sessions: map[string]bool{}}
	for _, origin := range o.AllowedOrigins {
		if origin == "*" {
			h.anyOrigin = true
		} else {
			h.origins[normalOrigin(origin)] = true
		}
	}
	idle := max(o.SessionIdleTimeout, 0)
	h.sdk = sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return s },
		&sdkmcp.StreamableHTTPOptions{SessionTimeout: idle, MaxRequestBodyBytes: o.MaxRequestBytes})
	if o.MaxConcurrent > 0 {
		h.serving = make(chan struct{}, o.MaxConcurrent)
		s.AddReceivingMiddleware(limitCalls(o.MaxConcurrent))
	}
	return h
}

type httpHandler struct {
	opts      HTTPOptions
	server    *sdkmcp.Server
	sdk       http.Handler
	origins   map[string]bool // normalised AllowedOrigins
	anyOrigin bool
	serving   chan struct{} // a slot per POST request being served; nil: no limit

	mu       sync.Mutex
	sessions map[string]bool // the sessions this handler started, maybe closed since
	starting int             // requests that may start a session, in flight
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origins := r.Header.Values("Origin"); len(origins) > 0 && !h.originAllowed(origins) {
		http.Error(w, fmt.Sprintf("Forbidden: origin %q may not call this MCP server (see HTTPOptions.AllowedOrigins)", origins[0]), http.StatusForbidden)
		return
	}
	if h.opts.WriteTimeout > 0 {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: h.opts.WriteTimeout}
		if dw.rc.SetWriteDeadline(time.Time{}) == nil { // else not net/http's: no deadlines
			w = dw
			// For the end of the response, which net/http writes.
			defer dw.rc.SetWriteDeadline(time.Now().Add(dw.timeout))
		}
	}
	if r.Method == http.MethodPost {
		// A slot for the whole request: once read, its body waits in the
		// session's queue and is held while it is handled.
		if h.serving != nil {
			select {
			case h.serving <- struct{}{}:
				defer func() { <-h.serving }()
			default:
				w.Header().Set("Retry-After", "1")
				http.Error(w, fmt.Sprintf("Service Unavailable: %d requests are being served, the most this server allows; retry later", h.opts.MaxConcurrent), http.StatusServiceUnavailable)
				return
			}
		}
		if !h.readBody(w, r) {
			return
		}
		if r.Header.Get("Mcp-Session-Id") == "" {
			if !h.admit() {
				w.Header().Set("Retry-After", "10")
				http.Error(w, fmt.Sprintf("Service Unavailable: %d MCP sessions are open, the most this server allows; close one (DELETE) or retry later", h.opts.MaxSessions), http.StatusServiceUnavailable)
				return
			}
			sw := &sessionWriter{ResponseWriter: w, h: h}
			defer sw.settle()
			w = sw
		}
	}
	h.sdk.ServeHTTP(w, r)
}

// deadlineWriter gives each write of a response timeout to complete.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.ResponseWriter.Write(p)
}

func (w *deadlineWriter) Flush() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	_ = w.rc.Flush()
}

// Unwrap lets http.ResponseController reach net/http's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sessionWriter ends an admitted request (see admit) when its response
// starts, before its client can send another: then the SDK has started
// its session, or not.
type sessionWriter struct {
	http.ResponseWriter
	h       *httpHandler
	settled bool
}

func (w *sessionWriter) settle() {
	if !w.settled {
		w.settled = true
		w.h.started(w.Header().Get("Mcp-Session-Id"))
	}
}

func (w *sessionWriter) WriteHeader(code int) {
	w.settle()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionWriter) Write(p []byte) (int, error) {
	w.settle()
	return w.ResponseWriter.Write(p)
}

func (w *sessionWriter) Flush() {
	w.settle()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach net/http's writer.
func (w *sessionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// originAllowed reports whether a request with these Origin headers may go
// on: one origin, listed or on loopback.
func (h *httpHandler) originAllowed(origins []string) bool {
	if h.anyOrigin {
		return true
	}
	if len(origins) != 1 {
		return false
	}
	o := normalOrigin(origins[0])
	if h.origins[o] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// normalOrigin is origin in lower case without a default port, so that
// equal origins compare equal.
func normalOrigin(origin string) string {
	o := strings.ToLower(strings.TrimSpace(origin))
	o = strings.TrimSuffix(o, "/")
	switch {
	case strings.HasPrefix(o, "http://"):
		o = strings.TrimSuffix(o, ":80")
	case strings.HasPrefix(o, "https://"):
		o = strings.TrimSuffix(o, ":443")
	}
	return o
}

// readBody reads r's body whole, within MaxRequestBytes and BodyTimeout,
// and puts it back in r for the SDK; it answers the request itself and
// returns false when the body is too large or too slow.
func (h *httpHandler) readBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	body := r.Body
	if h.opts.MaxRequestBytes > 0 {
		body = http.MaxBytesReader(w, body, h.opts.MaxRequestBytes)
	}
	if h.opts.BodyTimeout > 0 {
		// A deadline on the connection: a read blocked on a client that
		// sends nothing ends too. Without support for it (a ResponseWriter
		// that is not net/http's), the body is read without one.
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout)) == nil {
			// Cleared once read: net/http would otherwise cancel the
			// request when the deadline passes while it is answered.
			defer rc.SetReadDeadline(time.Time{})
		}
	}
	data, err := io.ReadAll(body)
	r.Body.Close()
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, fmt.Sprintf("Content Too Large: an MCP request body may have at most %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
		return false
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		w.Header().Set("Connection", "close")
		http.Error(w, "Request Timeout: the body took over "+h.opts.BodyTimeout.String()+" to arrive", http.StatusRequestTimeout)
		return false
	case err != nil:
		http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.ContentLength = int64(len(data))
	return true
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// admit reports whether a request that may start a session can go on: the
// sessions this handler started that are still open, and the requests
// that may start one, are fewer than MaxSessions. started ends it.
func (h *httpHandler) admit() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.opts.MaxSessions > 0 {
		open := map[string]bool{}
		for ss := range h.server.Sessions() {
			open[ss.ID()] = true
		}
		for id := range h.sessions {
			if !open[id] {
				delete(h.sessions, id)
			}
		}
		if len(h.sessions)+h.starting >= h.opts.MaxSessions {
			return false
		}
	}
	h.starting++
	return true
}

// started ends an admitted request; id is the session it started, if any.
func (h *httpHandler) started(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.starting--
	if id != "" && h.opts.MaxSessions > 0 {
		h.sessions[id] = true
	}
}

// limitCalls is a middleware refusing a tools/call while n others run.
func limitCalls(n int) sdkmcp.Middleware {
	slots := make(chan struct{}, n)
	return func(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
		return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
				return next(ctx, method, req)
			default:
				return nil, &jsonrpc.Error{Code: codeBusy,
					Message: "server busy: " + strconv.Itoa(n) + " tool calls are running, the most this server allows; retry later"}
			}
		}
	}
}
