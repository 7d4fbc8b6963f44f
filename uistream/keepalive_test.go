package uistream_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/uistream"
)

// keepAliveProtocols are the handlers under test, each with a request
// that runs the agent and the type of the last data event it sends.
var keepAliveProtocols = []struct {
	name    string
	handler func(uistream.Options) http.Handler
	body    string
	last    string
}{
	{"AI SDK", func(o uistream.Options) http.Handler { return uistream.NewAISDKHandler(o) }, userBody("go slow"), "[DONE]"},
	{"AG-UI", func(o uistream.Options) http.Handler { return uistream.NewAGUIHandler(o) },
		aguiInput("run-1", []string{aguiUser("u1", "go slow")}), "RUN_FINISHED"},
}

// slowToolAgent returns an agent whose one tool, slow, waits until
// release is closed (or 30 s pass, a hang guard that fails the test) or
// its context is done, and reports its context's end on cancelled.
func slowToolAgent(release <-chan struct{}, cancelled chan<- error) *runlet.Agent {
	slow := runlet.NewTool("slow", "Takes its time.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-release:
			return "done at last", nil
		case <-ctx.Done():
			cancelled <- ctx.Err()
			return "", ctx.Err()
		case <-time.After(30 * time.Second):
			return "", errors.New("no keep-alive came within 30 s")
		}
	})
	m := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_1", "slow", `{}`)),
		runlettest.TextReply("Finished."),
	)
	return &runlet.Agent{Name: "assistant", Model: m, Tools: []runlet.Tool{slow}}
}

// TestKeepAliveWhileToolRuns: while a tool runs, the stream carries
// keep-alive comments (the tool ends only once the client has read one),
// each a whole line between frames, and the run then finishes as usual.
func TestKeepAliveWhileToolRuns(t *testing.T) {
	for _, p := range keepAliveProtocols {
		t.Run(p.name, func(t *testing.T) {
			release, cancelled := make(chan struct{}), make(chan error, 1)
			srv := httptest.NewServer(p.handler(uistream.Options{
				Runtime: runlet.NewRuntime(), Agent: slowToolAgent(release, cancelled), KeepAlive: 5 * time.Millisecond,
			}))
			defer srv.Close()
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(p.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			var comments int
			var last string
			prev := "" // the line before, blank between events
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, ":"):
					if line != ": keep-alive" || prev != "" {
						t.Fatalf("comment %q after %q", line, prev)
					}
					if comments++; comments == 1 {
						close(release)
					}
				case strings.HasPrefix(line, "data: "):
					last = line
				case line != "":
					t.Fatalf("unexpected line %q", line)
				}
				prev = line
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if comments == 0 {
				t.Fatal("no keep-alive comment")
			}
			if !strings.Contains(last, p.last) {
				t.Errorf("last event %q, want %s", last, p.last)
			}
		})
	}
}

// TestKeepAliveClientLeaves: a client that leaves while the tool runs,
// after a keep-alive, cancels the run, and the handler's goroutines end
// (srv.Close waits for the handler; TestMain's goleak checks the rest).
func TestKeepAliveClientLeaves(t *testing.T) {
	for _, p := range keepAliveProtocols {
		t.Run(p.name, func(t *testing.T) {
			release, cancelled := make(chan struct{}), make(chan error, 1)
			defer close(release)
			srv := httptest.NewServer(p.handler(uistream.Options{
				Runtime: runlet.NewRuntime(), Agent: slowToolAgent(release, cancelled), KeepAlive: 5 * time.Millisecond,
			}))
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(p.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() && sc.Text() != ": keep-alive" {
			}
			cancel()
			resp.Body.Close()
			select {
			case err := <-cancelled:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("tool's context ended with %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the run was not cancelled")
			}
		})
	}
}

// keepAliveSpy passes a response through and signals seen (without
// blocking) when a keep-alive comment is written to it.
type keepAliveSpy struct {
	http.ResponseWriter
	seen chan<- struct{}
}

func (s keepAliveSpy) Write(p []byte) (int, error) {
	n, err := s.ResponseWriter.Write(p)
	if bytes.Contains(p, []byte(": keep-alive\n\n")) {
		select {
		case s.seen <- struct{}{}:
		default:
		}
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the response's Flush and
// deadlines.
func (s keepAliveSpy) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// keepAliveServer serves handler with a 5 ms keep-alive and an agent
// whose slow tool returns once a keep-alive was written to the response.
func keepAliveServer(t *testing.T, handler func(uistream.Options) http.Handler) *httptest.Server {
	seen := make(chan struct{}, 1)
	h := handler(uistream.Options{
		Runtime: runlet.NewRuntime(), Agent: slowToolAgent(seen, make(chan error, 1)), KeepAlive: 5 * time.Millisecond,
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(keepAliveSpy{ResponseWriter: w, seen: seen}, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestKeepAliveClients: the protocols' own clients (ai's
// DefaultChatTransport and readUIMessageStream; @ag-ui/client's
// HttpAgent) read a stream holding keep-alive comments as if they were
// not there.
func TestKeepAliveClients(t *testing.T) {
	t.Run("AI SDK", func(t *testing.T) {
		srv := keepAliveServer(t, func(o uistream.Options) http.Handler { return uistream.NewAISDKHandler(o) })
		s := runClient(t, srv.URL, "keepalive")
		msg := parseMessage(t, s.First)
		var parts []string
		for _, p := range msg.Parts {
			parts = append(parts, p.Type+":"+p.State+":"+string(p.Output)+p.Text)
		}
		want := `step-start:: dynamic-tool:output-available:"done at last" step-start:: text:done:Finished.`
		if got := strings.Join(parts, " "); got != want {
			t.Errorf("message parts:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("AG-UI", func(t *testing.T) {
		srv := keepAliveServer(t, func(o uistream.Options) http.Handler { return uistream.NewAGUIHandler(o) })
		s := runAGUIClient(t, srv.URL, "keepalive")
		if s.Error != "" || s.Types[len(s.Types)-1] != "RUN_FINISHED" {
			t.Fatalf("run: %v %q", s.Types, s.Error)
		}
		if s.Comments == 0 {
			t.Error("the stream held no keep-alive comment")
		}
		if n := len(s.Messages); n == 0 || s.Messages[n-1].Content != "Finished." {
			t.Errorf("client messages %+v", s.Messages)
		}
	})
}
