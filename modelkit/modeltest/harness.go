package modeltest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// guard bounds every wait of the suite: a hang guard, never a timing
// assertion.
const guard = 30 * time.Second

// testKey is the recognisable key the fake server requires; no error may
// contain it.
const testKey = "sk-modeltest-7f3a9c-never-in-errors"

// maxResponseBytes is Server.MaxResponseBytes: small, so the oversized
// response is cheap.
const maxResponseBytes = 16 << 10

// harness is one subtest's server, model and HTTP watch.
type harness struct {
	t     *testing.T
	srv   runlettest.WireServer
	watch *watch
	model runlet.Model
	// newModel makes another model for the same server, with s changed.
	newModel func(s Server) runlet.Model
}

func newHarness(t *testing.T, wire Wire, newModel func(*testing.T, Server) runlet.Model) *harness {
	t.Helper()
	srv := wire()
	t.Cleanup(srv.Close)
	srv.RequireAPIKey(testKey)
	w := newWatch()
	t.Cleanup(w.close) // runs before srv.Close: frees handlers a broken model left stalled
	s := Server{BaseURL: srv.BaseURL(), APIKey: testKey, HTTPClient: &http.Client{Transport: w}, MaxResponseBytes: maxResponseBytes}
	h := &harness{t: t, srv: srv, watch: w}
	h.newModel = func(s Server) runlet.Model {
		m := newModel(t, s)
		if m == nil {
			t.Fatal("modeltest: newModel returned nil")
		}
		return m
	}
	h.model = h.newModel(s)
	return h
}

// ctx returns a context bounded by the hang guard.
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	h.t.Cleanup(cancel)
	return ctx
}

// noKey fails the test if err shows the key, in its message or its fields.
func noKey(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	shown := err.Error() + fmt.Sprintf(" %+v", err)
	if perr, ok := err.(*runlet.ProviderError); ok {
		shown += fmt.Sprintf(" %+v", *perr)
	}
	if strings.Contains(shown, testKey) || strings.Contains(shown, testKey[3:]) {
		t.Errorf("%s: the error shows the API key: %v", what, err)
	}
}

// watch is the suite's HTTP transport: it records every response body and
// connection, so the suite can check that bodies are closed and free
// stalled server handlers at the end.
type watch struct {
	tr *http.Transport

	mu     sync.Mutex
	conns  []net.Conn
	bodies []*watchedBody
}

func newWatch() *watch {
	w := &watch{}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			w.mu.Lock()
			w.conns = append(w.conns, c)
			w.mu.Unlock()
		}
		return c, err
	}
	w.tr = tr
	return w
}

// RoundTrip implements http.RoundTripper.
func (w *watch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.tr.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	b := &watchedBody{ReadCloser: resp.Body, closed: make(chan struct{})}
	resp.Body = b
	w.mu.Lock()
	w.bodies = append(w.bodies, b)
	w.mu.Unlock()
	return resp, nil
}

// waitClosed fails the test unless every response body received so far
// is closed within the hang guard.
func (w *watch) waitClosed(t testing.TB, what string) {
	t.Helper()
	w.mu.Lock()
	bodies := append([]*watchedBody(nil), w.bodies...)
	w.mu.Unlock()
	if len(bodies) == 0 {
		t.Errorf("%s: no response went through Server.HTTPClient: configure the model with it", what)
	}
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for i, b := range bodies {
		select {
		case <-b.closed:
		case <-timer.C:
			t.Errorf("%s: response body %d was not closed within %v", what, i+1, guard)
			return
		}
	}
}

// close closes every connection, so a server handler a model left
// stalled returns and the server can shut down.
func (w *watch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.conns {
		_ = c.Close()
	}
	w.tr.CloseIdleConnections()
}

type watchedBody struct {
	io.ReadCloser
	once   sync.Once
	closed chan struct{}
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { close(b.closed) })
	return err
}
