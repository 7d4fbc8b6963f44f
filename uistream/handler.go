package uistream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/runlet/runlet"
)

// Defaults for the Options left zero.
const (
	// DefaultMaxBodyBytes bounds a request body: a chat's whole history,
	// as useChat sends it on every turn.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultWriteTimeout is how long one write may wait for a client
	// that does not read before the run is cancelled.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultKeepAlive is how long a stream stays silent before the
	// handler sends a keep-alive comment, under the read timeouts proxies
	// commonly apply (60 s for nginx's proxy_read_timeout).
	DefaultKeepAlive = 15 * time.Second
)

// Options configure a handler; every protocol's handler takes the same.
// Runtime and Agent are required: a handler constructor panics without
// them, a programming error.
type Options struct {
	// Runtime runs the agent. To resume an interrupted run in another
	// process, give every process a Runtime on the same store
	// (runlet.WithStore).
	Runtime *runlet.Runtime
	// Agent is the agent every request runs.
	Agent *runlet.Agent

	// Session returns the session a request runs in, from the request
	// (its authenticated user, say) and the conversation ID the client
	// sent (useChat's id, AG-UI's threadId), which the client chooses
	// freely: do not use it alone where conversations are private. With a
	// session, the history comes from the Runtime's session store
	// (runlet.WithStore) and the client's copy is ignored but for its
	// last user message, the input; a resume must belong to the same
	// session (see Checkpoints). An error answers 403 with no detail; ""
	// runs without a session. Nil: no sessions, the history is the one
	// the client sends, as any other input.
	Session func(r *http.Request, chatID string) (string, error)
	// Checkpoints is the store the Runtime keeps its checkpoints in (the
	// one given to runlet.WithStore). When set, a request that resumes a
	// run is refused unless the run's checkpoint names the request's
	// session ("" without one): without it, the run ID alone, an
	// unguessable random ID the page received, entitles its holder to
	// answer the run's approvals.
	Checkpoints runlet.CheckpointStore
	// RunOptions adds run options for a request, such as
	// runlet.WithOutputSchema, a run ID or settings. It is not called for
	// a resume, which keeps the run's own.
	RunOptions func(r *http.Request) []runlet.RunOption

	// MaxBodyBytes bounds the request body; a larger one is answered 413
	// before anything runs. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// AllowOrigins lists the origins (such as "https://app.example.com")
	// whose pages may call the handler from another origin (CORS). Empty,
	// the default, sends no CORS header: only pages of the handler's own
	// origin can read its answers. "*" allows any origin.
	AllowOrigins []string
	// WriteTimeout bounds each write to the client. The run waits for a
	// slow client (events are not queued, so memory does not grow with
	// the client's delay) and is cancelled when one write waits longer
	// than this (at least 7/8 of it: the deadline moves in steps). Zero
	// means DefaultWriteTimeout; negative, no bound.
	WriteTimeout time.Duration
	// KeepAlive is how long the stream may stay silent, while a tool or
	// the model takes its time, before the handler sends an SSE comment
	// line (": keep-alive" and a blank line, which clients ignore), so
	// that a proxy with a read timeout does not cut the stream. The
	// comment is written between frames, under WriteTimeout like them; a
	// failed one cancels the run. Zero means DefaultKeepAlive; negative,
	// no keep-alive.
	KeepAlive time.Duration
	// ErrorText is the text a client sees for a failed run (err is what
	// runlet.Runtime.Stream yielded, the *runlet.RunFailed its event, nil
	// when the run failed before it started). Nil means DefaultErrorText,
	// which says nothing the error itself says: an error's text may name
	// hosts, paths or a provider's message that the page's user should
	// not see.
	ErrorText func(err error, ev *runlet.RunFailed) string
}

// DefaultErrorText is the error text a client sees when Options.ErrorText
// is nil: the run failed, and how it is classified (RunFailed.ErrorType:
// "canceled", "timeout", "max_turns", an HTTP status such as "429", ...).
func DefaultErrorText(err error, ev *runlet.RunFailed) string {
	switch {
	case errors.Is(err, runlet.ErrNotFound):
		return "this run is no longer waiting: its approvals were already answered, or it is unknown"
	case errors.Is(err, runlet.ErrInvalidDecision):
		return "the answers do not match the calls waiting for approval"
	case ev != nil && ev.ErrorType != "":
		return "the agent's run failed (" + ev.ErrorType + ")"
	}
	return "the agent's run failed"
}

// turn is what a request asks for, whatever its protocol: a new run on
// history and input, or the resume of an interrupted run with decisions.
type turn struct {
	chatID    string           // the client's conversation ID, for Options.Session
	history   []runlet.Message // before the input; ignored with a session
	input     []runlet.Message // the new messages, usually one user message
	resume    string           // the run to resume; "" for a new run
	decisions []runlet.Decision
	wire      any // what the protocol's decode keeps for its encoder (AG-UI's input)
	// tools are the page's own tools (AG-UI's frontend tools), offered to
	// the model beside the agent's; a name the agent has stays the agent's.
	tools []runlet.Tool
}

// protocol is the seam a wire protocol plugs into serve: it reads a
// request into a turn and writes a run's events its way.
type protocol interface {
	// decode reads a request body (already bounded by MaxBodyBytes). Its
	// error is answered 400, with its text: it must name what is wrong
	// with the request and nothing else.
	decode(body []byte) (*turn, error)
	// header sets the response headers before the first write.
	header(h http.Header)
	// encoder returns the encoder of one response.
	encoder(ctx context.Context, t *turn, o *Options) encoder
}

// encoder writes one run's events as one protocol's frames.
type encoder interface {
	// event writes what ev maps to (nothing for an event the protocol does
	// not carry; an event type it does not know is skipped). err is the
	// error yielded with a terminal *runlet.RunFailed.
	event(w *frameWriter, ev runlet.Event, err error) error
	// end writes what closes the stream once the run's events are done;
	// err is set when the stream ended with an error and no terminal event
	// (a resume refused before it started, say).
	end(w *frameWriter, err error) error
}

// handler is the http.Handler every protocol shares.
type handler struct {
	opts  Options
	proto protocol
}

func newHandler(o Options, p protocol) *handler {
	if o.Runtime == nil || o.Agent == nil {
		panic("uistream: Options.Runtime and Options.Agent are required")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.ErrorText == nil {
		o.ErrorText = DefaultErrorText
	}
	o.AllowOrigins = slices.Clone(o.AllowOrigins)
	return &handler{opts: o, proto: p}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.cors(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "uistream: POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("uistream: request body over %d bytes", h.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "uistream: reading the request body failed", http.StatusBadRequest)
		return
	}
	t, err := h.proto.decode(body)
	if err != nil {
		http.Error(w, "uistream: "+err.Error(), http.StatusBadRequest)
		return
	}
	// Cancelled when the client goes away, or when a keep-alive comment
	// cannot be written to it.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	session := ""
	if h.opts.Session != nil {
		if session, err = h.opts.Session(r, t.chatID); err != nil {
			http.Error(w, "uistream: forbidden", http.StatusForbidden)
			return
		}
	}
	if t.resume != "" {
		if status, msg := h.checkResume(ctx, t.resume, session); status != 0 {
			http.Error(w, "uistream: "+msg, status)
			return
		}
	}
	h.proto.header(w.Header())
	w.WriteHeader(http.StatusOK)
	fw := newFrameWriter(w, h.opts.WriteTimeout)
	stopKeepAlive := fw.startKeepAlive(h.opts.KeepAlive, cancel)
	defer stopKeepAlive()
	enc := h.proto.encoder(ctx, t, &h.opts)
	// An error means the client went away, or stopped reading: the run is
	// cancelled by the break out of the stream; nothing more can be
	// written.
	_ = h.stream(ctx, fw, enc, t, session, r)
}

// stream runs or resumes the turn's run and writes its events until the
// terminal one; it returns the first write error, having cancelled the run.
func (h *handler) stream(ctx context.Context, fw *frameWriter, enc encoder, t *turn, session string, r *http.Request) error {
	var events func(func(runlet.Event, error) bool)
	agent := withPageTools(h.opts.Agent, t.tools)
	if t.resume != "" {
		events = h.opts.Runtime.ResumeStream(ctx, agent, t.resume, t.decisions...)
	} else {
		var opts []runlet.RunOption
		if session != "" {
			opts = append(opts, runlet.WithSession(session))
		} else if len(t.history) > 0 {
			opts = append(opts, runlet.WithHistory(t.history...))
		}
		opts = append(opts, runlet.WithInput(t.input...))
		if h.opts.RunOptions != nil {
			opts = append(opts, h.opts.RunOptions(r)...)
		}
		events = h.opts.Runtime.Stream(ctx, agent, "", opts...)
	}
	var last error
	for ev, err := range events {
		if ev == nil {
			last = err
			continue
		}
		if werr := fw.send(func() error { return enc.event(fw, ev, err) }); werr != nil {
			return werr // breaking out cancels the run
		}
	}
	return fw.send(func() error { return enc.end(fw, last) })
}

// withPageTools returns agent with the page's tools added, but for those
// named as one of the agent's own tools or handoffs: a page cannot stand in
// for the server's tool. The agent is copied, never changed.
func withPageTools(agent *runlet.Agent, tools []runlet.Tool) *runlet.Agent {
	if len(tools) == 0 {
		return agent
	}
	taken := make(map[string]bool, len(agent.Tools)+len(agent.Handoffs))
	for _, tool := range agent.Tools {
		taken[tool.Spec().Name] = true
	}
	for _, h := range agent.Handoffs {
		if h.Agent != nil {
			taken["transfer_to_"+h.Agent.Name] = true
		}
	}
	a := *agent
	a.Tools = slices.Clip(a.Tools)
	for _, tool := range tools {
		if name := tool.Spec().Name; !taken[name] {
			taken[name] = true
			a.Tools = append(a.Tools, tool)
		}
	}
	return &a
}

// checkResume refuses a resume of a run of another session, when the
// handler knows the checkpoint store. It returns 0 to go on.
func (h *handler) checkResume(ctx context.Context, runID, session string) (int, string) {
	if h.opts.Checkpoints == nil {
		return 0, ""
	}
	cp, err := h.opts.Checkpoints.LoadCheckpoint(ctx, runID)
	switch {
	case errors.Is(err, runlet.ErrNotFound):
		return 0, "" // the resume itself reports it, as the protocol's error
	case err != nil:
		return http.StatusInternalServerError, "loading the run failed"
	case cp.SessionID != session:
		return http.StatusForbidden, "forbidden"
	}
	return 0, ""
}

// cors answers CORS for an allowed origin, and a preflight request; it
// reports whether to go on with the request.
func (h *handler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	allowed := origin != "" && (slices.Contains(h.opts.AllowOrigins, origin) || slices.Contains(h.opts.AllowOrigins, "*"))
	if len(h.opts.AllowOrigins) > 0 {
		w.Header().Add("Vary", "Origin") // the answer depends on it, for caches
	}
	if allowed {
		w.Header().Set("Access-Control-Allow-Origin", origin)
	}
	if r.Method != http.MethodOptions {
		return true
	}
	if !allowed {
		http.Error(w, "uistream: cross-origin requests are not allowed", http.StatusForbidden)
		return false
	}
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		hdr.Set("Access-Control-Allow-Headers", req)
	}
	hdr.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return false
}

// sanitizeLine keeps a string fit for a one-line error.
func sanitizeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, s)
}
