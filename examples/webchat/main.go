// Command webchat serves an agent to a React chat page built on the Vercel
// AI SDK's useChat: uistream.NewAISDKHandler streams the run (reasoning,
// text, tool calls as they run) and asks the page to approve a call.
//
//	go run ./examples/webchat                      # offline: a scripted fake OpenAI server
//	OPENAI_API_KEY=sk-... go run ./examples/webchat
//	OPENAI_BASE_URL=http://localhost:11434/v1 RUNLET_MODEL=llama3.2 go run ./examples/webchat
//
// then open http://127.0.0.1:8080. /api/agui serves the same agent to
// AG-UI clients (uistream.NewAGUIHandler). The page (web/src, built with esbuild
// from the real `ai` and `@ai-sdk/react` packages by web/build.sh) is
// committed in assets/ and embedded, so running the example needs no Node.
//
// Offline, the real OpenAI adapter talks to runlettest's fake Chat
// Completions server on loopback, scripted to reason, call get_weather,
// then ask to save a note with save_note, a tool that needs your approval.
package main

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/uistream"
)

//go:embed assets
var assets embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "webchat:", err)
		os.Exit(1)
	}
}

// run serves the page and the chat on addr until ctx is done.
func run(ctx context.Context, addr string, getenv func(string) string, stderr io.Writer) error {
	app, err := newApp(getenv, stderr)
	if err != nil {
		return err
	}
	defer app.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// The streams take as long as runs do: no WriteTimeout (uistream bounds
	// each write); reading a request is bounded.
	srv := &http.Server{Handler: app.Handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	fmt.Fprintf(stderr, "webchat: open http://%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// app is the example's server: the page and the chat endpoint.
type app struct {
	Handler http.Handler
	close   func()
	// weatherGate, when a test sets it before serving, holds get_weather
	// until it is closed instead of the service's usual moment, so that
	// the test sees the call running however slow the machine is.
	weatherGate chan struct{}
}

// Close stops the offline fake server, if any.
func (a *app) Close() {
	if a.close != nil {
		a.close()
	}
}

// newApp builds the server: live on OpenAI (or any OpenAI-compatible
// server) when the environment names one, else offline.
func newApp(getenv func(string) string, stderr io.Writer) (*app, error) {
	cfg := openai.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "gpt-4o-mini")}
	a := &app{}
	var model runlet.Model
	if getenv("OPENAI_API_KEY") == "" && getenv("OPENAI_BASE_URL") == "" {
		fake := newFakeModel()
		a.close = fake.Close
		cfg.APIKey, cfg.BaseURL = "unused", fake.BaseURL()
		model = paced{openai.NewChatCompletions(cfg), 30 * time.Millisecond}
		fmt.Fprintln(stderr, "webchat: no OPENAI_API_KEY or OPENAI_BASE_URL: offline, on a scripted fake OpenAI server (ask about the weather).")
	} else {
		cfg.APIKey, cfg.BaseURL = getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
		model = openai.NewChatCompletions(cfg)
	}
	store := runlet.NewMemoryStore() // or store/sqlite, store/postgres: shared by every instance
	agent := &runlet.Agent{
		Name: "webchat",
		Instructions: "You are a helpful assistant. Use get_weather for the weather; " +
			"offer to save a note about it with save_note.",
		Model: model,
		Tools: tools(a.weatherWait),
	}
	opts := uistream.Options{
		Runtime:     runlet.NewRuntime(runlet.WithStore(store)),
		Agent:       agent,
		Checkpoints: store,
	}
	chat := uistream.NewAISDKHandler(opts)
	page, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/chat", chat)
	// The same agent for AG-UI front ends (@ag-ui/client's HttpAgent,
	// CopilotKit): point their agent URL at /api/agui.
	mux.Handle("/api/agui", uistream.NewAGUIHandler(opts))
	mux.Handle("/", http.FileServerFS(page))
	a.Handler = mux
	return a, nil
}
