package uistream_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/uistream"
)

// discardWriter is a ResponseWriter that drops what it is sent, so that a
// benchmark measures the handler, not a network.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
func (w *discardWriter) Flush()                      {}

// benchAgent answers every request with a tool call, then, once it has
// the result, with a 2,000-character answer streamed in 8-rune deltas
// after some reasoning: two model calls, one tool call, ~270 deltas.
func benchAgent() *runlet.Agent {
	answer := strings.Repeat("Sunny and mild. ", 125)
	m := &runlettest.Model{ChunkSize: 8, Func: func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == runlet.RoleTool {
			r := runlettest.TextReply(answer)
			r.Response.Message.Parts = append([]runlet.Part{runlet.ReasoningPart{Text: "The tool answered."}}, r.Response.Message.Parts...)
			return r
		}
		return runlettest.ToolCallReply(runlettest.Call("call_1", "get_weather", `{"city":"Paris"}`))
	}}
	return aguiAgent(m)
}

// BenchmarkHandlerOverhead compares a run streamed by each handler to the
// same run consumed from Runtime.Stream directly. Each iteration runs
// both, one after the other, so that the ratio it reports (x-direct:
// the handler's time over direct's) holds on a busy machine too; the
// handler writes to a ResponseWriter that discards, so the ratio is the
// handler's own cost, not a network's.
func BenchmarkHandlerOverhead(b *testing.B) {
	rt := runlet.NewRuntime()
	agent := benchAgent()
	direct := func() {
		n := 0
		for _, err := range rt.Stream(context.Background(), agent, "Weather in Paris?") {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n < 200 {
			b.Fatalf("%d events", n)
		}
	}
	for _, tc := range []struct {
		name string
		h    http.Handler
		body string
	}{
		{"aisdk", uistream.NewAISDKHandler(uistream.Options{Runtime: rt, Agent: agent}),
			`{"id":"chat1","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Weather in Paris?"}]}]}`},
		{"agui", uistream.NewAGUIHandler(uistream.Options{Runtime: rt, Agent: agent}),
			aguiInput("r1", []string{aguiUser("u1", "Weather in Paris?")})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := []byte(tc.body)
			var inDirect, inHandler time.Duration
			for b.Loop() {
				t0 := time.Now()
				direct()
				t1 := time.Now()
				req, _ := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
				w := &discardWriter{h: make(http.Header)}
				tc.h.ServeHTTP(w, req)
				inDirect, inHandler = inDirect+t1.Sub(t0), inHandler+time.Since(t1)
				if w.n < 10000 {
					b.Fatalf("%d bytes written", w.n)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(inDirect.Nanoseconds())/n, "direct-ns/run")
			b.ReportMetric(float64(inHandler.Nanoseconds())/n, "handler-ns/run")
			b.ReportMetric(float64(inHandler)/float64(inDirect), "x-direct")
		})
	}
}
