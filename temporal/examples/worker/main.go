// Command worker is a Temporal worker that runs a Runlet agent durably: each
// model call and each tool call is an activity, and send_postcard waits for
// a human's approval (see ../README.md for the commands).
//
//	go run ./examples/worker -address 127.0.0.1:7233 -namespace default
//
// With OPENAI_API_KEY (or OPENAI_BASE_URL) set it uses OpenAI's Chat
// Completions API (-model, default gpt-4o-mini); without, a scripted offline
// model that calls the two tools in turn, so the example runs anywhere.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/temporal"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

// TaskQueue is the queue the worker polls and the starter starts runs on.
const TaskQueue = "runlet-example"

type cityArgs struct {
	City string `json:"city" jsonschema:"the city, such as Paris"`
}

type postcardArgs struct {
	To   string `json:"to" jsonschema:"the recipient"`
	Text string `json:"text" jsonschema:"what the postcard says"`
}

func tools() []runlet.Tool {
	weather := map[string]string{"paris": "sunny, 18 °C", "london": "light rain, 12 °C", "tokyo": "clear, 21 °C"}
	return []runlet.Tool{
		runlet.NewTool("get_weather", "Returns the current weather in a city.",
			func(ctx context.Context, in cityArgs) (string, error) {
				if w, ok := weather[strings.ToLower(in.City)]; ok {
					return w, nil
				}
				return "", fmt.Errorf("no weather for %q", in.City)
			}),
		runlet.NewTool("send_postcard", "Sends a postcard. A human approves every postcard.",
			func(ctx context.Context, in postcardArgs) (string, error) {
				// A real side effect would pass this key on, so that an
				// attempt repeated after a crash sends nothing twice.
				log.Printf("postcard to %s: %q (idempotency key %s)", in.To, in.Text, temporal.IdempotencyKey(ctx))
				return "postcard sent to " + in.To, nil
			}, runlet.WithApproval()),
	}
}

// offline is a scripted model: weather first, then a postcard, then an
// answer.
func offline() runlet.Model {
	return &runlettest.Model{ChunkSize: 8, Func: func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
		last := req.Messages[len(req.Messages)-1]
		var results []string
		for _, p := range last.Parts {
			if r, ok := p.(runlet.ToolResultPart); ok {
				results = append(results, r.Content)
			}
		}
		switch {
		case last.Role == runlet.RoleUser:
			return runlettest.ToolCallReply(runlettest.Call("", "get_weather", `{"city":"Paris"}`))
		case len(req.Messages) < 4:
			text := fmt.Sprintf(`{"to":"Grandma","text":"Paris is %s. Love!"}`, strings.Join(results, ""))
			return runlettest.ToolCallReply(runlettest.Call("", "send_postcard", text))
		}
		return runlettest.TextReply("Done: " + strings.Join(results, "; ") + ".")
	}}
}

func main() {
	address := flag.String("address", "127.0.0.1:7233", "Temporal frontend host:port")
	namespace := flag.String("namespace", "default", "Temporal namespace")
	model := flag.String("model", "gpt-4o-mini", "OpenAI model, when OPENAI_API_KEY is set")
	streamAddr := flag.String("stream", "127.0.0.1:7280", "where the worker serves its runs' tokens to callers (server-sent events; empty: nowhere)")
	payloads := flag.String("payloads", "", "a directory to keep tool results and transcripts in, out of the workflow history (share it with the starter's -payloads)")
	flag.Parse()

	// The model calls' tokens go to callers through a Hub: the starter
	// subscribes to http://<stream>/?workflow_id=... (loopback only here:
	// the endpoint serves any run it is asked for, so a real deployment
	// puts it behind its authentication).
	hub := temporal.NewHub()
	if *streamAddr != "" {
		ln, err := net.Listen("tcp", *streamAddr)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("tokens at http://%s/?workflow_id=...", ln.Addr())
		go func() { log.Print(http.Serve(ln, hub)) }()
	}

	var m runlet.Model = offline()
	if os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "" {
		m = openai.NewChatCompletions(openai.Config{Model: *model})
	}
	var store temporal.PayloadStore
	if *payloads != "" {
		s, err := temporal.NewDirPayloadStore(*payloads)
		if err != nil {
			log.Fatal(err)
		}
		store = s
	}
	d, err := temporal.New(temporal.Config{
		Payloads: store,
		Agents: []*runlet.Agent{{
			Name:         "postcards",
			Instructions: "Look up the weather, then send a postcard about it, then say what you did.",
			Model:        m,
			Tools:        tools(),
		}},
		Publisher: hub,
		// Events reach observers on the worker; here, one line per event.
		Observers: []runlet.Observer{runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
			if _, ok := ev.(*runlet.TextDelta); !ok {
				log.Printf("event %T turn %d", ev, ev.Header().Turn)
			}
		})},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The SDK's own logs at INFO and above (its default logs DEBUG too).
	c, err := client.Dial(client.Options{HostPort: *address, Namespace: *namespace, Logger: tlog.NewStructuredLogger(slog.Default())})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, TaskQueue, worker.Options{})
	d.Register(w)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	if err := w.Run(stopChan(stop)); err != nil {
		log.Fatal(err)
	}
}

func stopChan(c chan os.Signal) <-chan any {
	out := make(chan any)
	go func() { <-c; close(out) }()
	return out
}
