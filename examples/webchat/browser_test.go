package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/runlet/runlet/internal/nodetest"
)

// TestBrowser drives the page in headless Chromium (from the system's
// packages) with playwright-core, offline: type a question, see the
// reasoning, the tool call while it runs and the answer stream in, approve
// the call on the page, and see the resumed run finish; then ask again in
// the same chat (the history, tool calls and approval included, goes back)
// and reject the call. On failure the
// script leaves a screenshot and the page's HTML in a directory kept and
// named in the test's log.
func TestBrowser(t *testing.T) {
	chromium := nodetest.Chromium(t)
	a, err := newApp(func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// get_weather runs until the script has seen it running on the page
	// and asks for it to finish: no race with the tool's usual latency.
	a.weatherGate = make(chan struct{})
	var release sync.Once
	mux := http.NewServeMux()
	mux.Handle("/", a.Handler)
	mux.HandleFunc("POST /test/release-weather", func(w http.ResponseWriter, r *http.Request) {
		release.Do(func() { close(a.weatherGate) })
	})
	srv := httptest.NewServer(mux) // 127.0.0.1
	defer srv.Close()
	shots, err := os.MkdirTemp("", "webchat-browser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screenshot and page kept in %s", shots)
			return
		}
		os.RemoveAll(shots)
	})
	out := nodetest.Run(t, "webchat-browser.mjs", []string{"CHROMIUM=" + chromium, "SHOTS=" + shots}, srv.URL)
	t.Logf("%s", out)
}
