package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
)

// FuzzServeMessage sends a client's JSON-RPC message (or any bytes) to a
// served runlet tool set: over Streamable HTTP, as the body of a POST that
// starts a session and of one inside an initialized session, and over
// stdio. Whatever the bytes, the server answers without a panic, a hang or
// a 5xx, and its session goes on. Seeds: testdata/fuzz/FuzzServeMessage.
func FuzzServeMessage(f *testing.F) {
	f.Add([]byte(initializeBody))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}}}`))

	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	echo := runlet.NewTool("echo", "Echoes.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	if err := mcp.AddTools(s, weather(), echo); err != nil {
		f.Fatal(err)
	}
	h := mcp.HTTPHandler(s, &mcp.HTTPOptions{MaxSessions: -1, SessionIdleTimeout: -1})
	f.Cleanup(func() {
		for ss := range s.Sessions() {
			ss.Close()
		}
	})
	serve := func(t *testing.T, body []byte, sid string) *httptest.ResponseRecorder {
		// A request that waits for the client (subscriptions/listen) ends
		// with its request, as when a client hangs up.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Errorf("%.200q: %d %.200q", body, rec.Code, rec.Body.String())
		}
		return rec
	}
	closeSession := func(id string) {
		for ss := range s.Sessions() {
			if ss.ID() == id {
				ss.Close()
			}
		}
	}
	var sid string
	session := func(t *testing.T) string {
		if sid == "" {
			sid = serve(t, []byte(initializeBody), "").Header().Get("Mcp-Session-Id")
			serve(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), sid)
		}
		return sid
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		// A request that may start a session.
		rec := serve(t, body, "")
		if id := rec.Header().Get("Mcp-Session-Id"); id != "" {
			closeSession(id)
		}
		// The same in a session, which goes on.
		if serve(t, body, session(t)).Code == http.StatusNotFound {
			sid = "" // the message ended the session: a new one next time
		}
		ping := serve(t, []byte(`{"jsonrpc":"2.0","id":"after","method":"ping"}`), session(t))
		if ping.Code != http.StatusOK || !strings.Contains(ping.Body.String(), `"id":"after"`) {
			t.Errorf("after %.200q, ping: %d %.200q", body, ping.Code, ping.Body.String())
		}

		// Over stdio: one message per line, until the input ends.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		in := append(append([]byte(initializeBody+"\n"), body...), '\n')
		err := s.Run(ctx, &sdkmcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(in)), Writer: discardCloser{}})
		if ctx.Err() != nil {
			t.Errorf("stdio: %.200q: the session did not end with its input: %v", body, err)
		}
	})
}

type discardCloser struct{}

func (discardCloser) Write(p []byte) (int, error) { return len(p), nil }
func (discardCloser) Close() error                { return nil }
