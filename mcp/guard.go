package mcp

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// guard watches what one connection receives from the server, in the order
// it arrives: it holds the server to Limits.MaxMessageBytes, marks the tool
// list stale the moment notifications/tools/list_changed is read (before
// any later message, such as a tool's result, is), and records a 401 or 403
// answer to an HTTP request.
//
// The SDK hands a notification to its handler on another goroutine, after
// later responses may have been delivered; so the mark is made here, in
// the read path (TestToolsetListChangedBeforeResult).
type guard struct {
	server   string
	maxBytes int
	changed  func()       // called on the reading goroutine; must be quick
	status   atomic.Int32 // the latest 401 or 403 received, else 0
	tooBig   atomic.Bool  // an HTTP body or event went past maxBytes
}

const listChanged = "notifications/tools/list_changed"

// sseSlack is what server-sent event framing adds to a message.
const sseSlack = 4 << 10

func (g *guard) tooLarge() error {
	return &LimitError{Server: g.server, Limit: "MaxMessageBytes", Value: int64(g.maxBytes)}
}

// overHTTP records that a body or event went past the limit, which ends
// the connection (the SDK cannot skip it), and returns the error.
func (g *guard) overHTTP() error {
	g.tooBig.Store(true)
	return g.tooLarge()
}

// transport wraps t so that its connections are guarded. The Streamable
// HTTP transport is guarded at the HTTP level instead (its connection
// cannot be wrapped: the SDK tells it the session's state through an
// unexported method).
func (g *guard) transport(t sdkmcp.Transport) sdkmcp.Transport {
	switch tt := t.(type) {
	case *sdkmcp.StreamableClientTransport:
		c := *tt
		c.HTTPClient = g.httpClient(tt.HTTPClient)
		if c.MaxEventSize == 0 {
			c.MaxEventSize = g.maxBytes + sseSlack
		}
		return &c
	case *sdkmcp.SSEClientTransport:
		c := *tt
		c.HTTPClient = g.httpClient(tt.HTTPClient)
		if c.MaxEventSize == 0 {
			c.MaxEventSize = g.maxBytes + sseSlack
		}
		t = &c
	}
	return guardedTransport{t, g}
}

type guardedTransport struct {
	t sdkmcp.Transport
	g *guard
}

func (t guardedTransport) Connect(ctx context.Context) (sdkmcp.Connection, error) {
	c, err := t.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardedConn{Connection: c, g: t.g}, nil
}

// guardedConn checks each message the server sends.
type guardedConn struct {
	sdkmcp.Connection
	g *guard
}

func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if len(m.Result) > c.g.maxBytes {
				// The call fails with a LimitError; the connection stays.
				return &jsonrpc.Response{ID: m.ID, Error: c.g.tooLarge()}, nil
			}
		case *jsonrpc.Request:
			if len(m.Params) > c.g.maxBytes {
				continue // not handled: a request goes unanswered
			}
			if !m.IsCall() && m.Method == listChanged {
				c.g.changed()
			}
		}
		return msg, nil
	}
}

// httpClient is hc (or a default client) sending its requests through the
// guard.
func (g *guard) httpClient(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &guardedRoundTripper{base: base, g: g}
	return c
}

// guardedRoundTripper records a 401 or 403, bounds a response body that
// holds one message (JSON, or an error) and each event of an event stream
// at Limits.MaxMessageBytes, and watches every body for
// notifications/tools/list_changed.
type guardedRoundTripper struct {
	base http.RoundTripper
	g    *guard
}

func (t *guardedRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		t.g.status.Store(int32(resp.StatusCode))
	}
	b := &guardedBody{rc: resp.Body, left: int64(t.g.maxBytes), g: t.g}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" && resp.StatusCode/100 == 2 {
		b.left, b.events = -1, true
	}
	resp.Body = b
	return resp, nil
}

// guardedBody is a response body read through the guard.
type guardedBody struct {
	rc   io.ReadCloser
	left int64 // bytes that may still be read; -1: no limit
	g    *guard
	tail []byte // the end of the previous read, for a name split across reads

	events  bool  // an event stream: each event is bounded, not the body
	inEvent int64 // bytes of the current event
	newline bool  // the last byte other than '\r' was '\n'
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := io.ReadFull(b.rc, one[:]); n > 0 {
			return 0, b.g.overHTTP()
		}
		return 0, io.EOF
	}
	if b.left > 0 && int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	if b.events && !b.countEvent(p[:n]) {
		return 0, b.g.overHTTP()
	}
	if n > 0 && b.watch(p[:n]) {
		b.g.changed()
	}
	return n, err
}

// countEvent counts p against the current event's size (an empty line ends
// an event); false means the event is too large.
func (b *guardedBody) countEvent(p []byte) bool {
	for _, c := range p {
		switch {
		case c == '\n' && b.newline:
			b.inEvent = 0
		case c == '\n':
			b.newline = true
		case c != '\r':
			b.newline = false
		}
		b.inEvent++
	}
	return b.inEvent <= int64(b.g.maxBytes)+sseSlack
}

func (b *guardedBody) Close() error { return b.rc.Close() }

// watch reports whether p, or the previous read's end joined to p, holds
// the name of the list_changed notification. A tool's result that quotes
// the name costs one needless refresh of the list, nothing more.
func (b *guardedBody) watch(p []byte) bool {
	const k = len(listChanged) - 1
	found := bytes.Contains(p, []byte(listChanged))
	if !found && len(b.tail) > 0 {
		joined := append(b.tail, p[:min(len(p), k)]...)
		found = bytes.Contains(joined, []byte(listChanged))
	}
	if len(p) >= k {
		b.tail = append(b.tail[:0], p[len(p)-k:]...)
	} else {
		b.tail = append(b.tail, p...)
		b.tail = b.tail[max(0, len(b.tail)-k):]
	}
	return found
}
