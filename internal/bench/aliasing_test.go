package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// Aliasing tests: the allocation work pools buffers (request scratch,
// SSE readers, body scanners) and reuses a run's own storage across turns
// (its calls, results, tool slot) and hands the run's slices to the
// Result. These tests run many tool runs at once on one Runtime and one
// Model of every adapter, streamed and not, each with its own tool
// arguments and answer, some with arguments large enough to grow the
// pooled buffers, some with escapes, some retried after an error body; they
// keep everything the run hands out (events as the Stream consumer gets
// them, what hooks and observers see, the Result) together with its JSON
// at the time it was handed out, and check afterwards that nothing
// changed, that every run saw only its own data and that a session store
// holds what the Result says. Run them with -race.

// aliasAdapter is one adapter under test against its fake server.
type aliasAdapter struct {
	name  string
	model func(base string, hc *http.Client) runlet.Model
	srv   func() runlettest.WireServer
}

func aliasAdapters() []aliasAdapter {
	return []aliasAdapter{
		{"chat", func(base string, hc *http.Client) runlet.Model {
			return openai.NewChatCompletions(openai.Config{BaseURL: base, APIKey: "k", Model: "gpt-x", MaxRetries: 3, HTTPClient: hc})
		}, func() runlettest.WireServer {
			s := runlettest.NewOpenAIChatServer()
			s.ChunkSize = aliasChunk
			return s
		}},
		{"responses", func(base string, hc *http.Client) runlet.Model {
			return openai.NewResponses(openai.Config{BaseURL: base, APIKey: "k", Model: "gpt-x", MaxRetries: 3, HTTPClient: hc})
		}, func() runlettest.WireServer {
			s := runlettest.NewOpenAIResponsesServer()
			s.ChunkSize = aliasChunk
			return s
		}},
		{"anthropic", func(base string, hc *http.Client) runlet.Model {
			return anthropic.NewMessages(anthropic.Config{BaseURL: base, APIKey: "k", Model: "claude-x", MaxRetries: 3, HTTPClient: hc})
		}, func() runlettest.WireServer {
			s := runlettest.NewAnthropicServer()
			s.ChunkSize = aliasChunk
			return s
		}},
		{"gemini", func(base string, hc *http.Client) runlet.Model {
			return gemini.New(gemini.Config{BaseURL: base, APIKey: "k", Model: "gemini-x", MaxRetries: 3, HTTPClient: hc})
		}, func() runlettest.WireServer {
			s := runlettest.NewGeminiServer()
			s.ChunkSize = aliasChunk
			return s
		}},
	}
}

// aliasChunk is the fake servers' delta size: small arguments come in one
// or a few deltas, large ones in some hundred.
const aliasChunk = 200

// aliasClient is an HTTP client of the test's own, its connections closed
// when the test ends, so that none lingers into an allocation test.
func aliasClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

var aliasJob = regexp.MustCompile(`job-([0-9]+)`)

// aliasArgs is call k's arguments of run n: distinct per run and call;
// every eighth run's first is large (70 KiB, past the sizes of the
// buffers the SSE reader pools), every third run's have escapes.
func aliasArgs(n, k int) string {
	// Past 2 KiB, so that a body is sent without a Content-Length and read
	// through httpc's pooled buffer.
	pad := strings.Repeat(fmt.Sprintf("%c%d.", 'a'+n%26, n), 600)
	if n%8 == 0 && k == 0 {
		pad = strings.Repeat(fmt.Sprintf("<%d.%d>", n, k), 70<<10/6)
	}
	if n%3 == 0 {
		pad += `\"q\"\\ \u00e9\n`
	}
	return fmt.Sprintf(`{"job":"job-%d","k":%d,"pad":"%s"}`, n, k, pad)
}

// aliasCalls is how many calls run n's model makes: 1 (a call running
// alone), 2 (the run's own buffers) or 3 (more than they hold).
func aliasCalls(n int) int { return 1 + n%3 }

// aliasResponder answers a run's first request with its calls and the
// second (which carries the tool results) with its answer.
func aliasResponder(req runlettest.WireRequest) runlettest.WireReply {
	m := aliasJob.FindSubmatch(req.Body)
	if m == nil {
		return runlettest.WireReply{Text: "no job"}
	}
	n, _ := strconv.Atoi(string(m[1]))
	if bytes.Contains(req.Body, []byte("result-of-job-")) {
		return runlettest.WireReply{Text: fmt.Sprintf("answer job-%d", n)}
	}
	var calls []runlettest.WireToolCall
	for k := range aliasCalls(n) {
		calls = append(calls, runlettest.WireToolCall{ID: fmt.Sprintf("call_%d_%d", n, k), Name: "echo", Arguments: aliasArgs(n, k)})
	}
	return runlettest.WireReply{Text: fmt.Sprintf("calling for job-%d", n), ToolCalls: calls}
}

type aliasIn struct {
	Job string `json:"job"`
	K   int    `json:"k"`
	Pad string `json:"pad"`
}

func aliasTool(opts ...runlet.ToolOption) runlet.Tool {
	return runlet.NewTool("echo", "echoes its job", func(_ context.Context, in aliasIn) (string, error) {
		return fmt.Sprintf("result-of-%s-%d-%d", in.Job, in.K, len(in.Pad)), nil
	}, opts...)
}

// kept is one value a run handed out, with its JSON when handed out.
type kept struct {
	what string
	v    any
	js   []byte
}

// keeper holds what runs handed out, per run.
type keeper struct {
	mu   sync.Mutex
	runs map[int][]kept
}

func (k *keeper) keep(t *testing.T, n int, what string, v any) {
	js, err := json.Marshal(v)
	if err != nil {
		t.Errorf("run %d: %s: %v", n, what, err)
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.runs == nil {
		k.runs = make(map[int][]kept)
	}
	k.runs[n] = append(k.runs[n], kept{what, v, js})
}

// check reports kept values whose JSON changed or that mention another
// run's job.
func (k *keeper) check(t *testing.T) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	for n, vs := range k.runs {
		for _, v := range vs {
			js, err := json.Marshal(v.v)
			if err != nil {
				t.Errorf("run %d: %s: %v", n, v.what, err)
				continue
			}
			if !bytes.Equal(js, v.js) {
				t.Errorf("run %d: %s changed after it was handed out:\nthen %.300s\nnow  %.300s", n, v.what, v.js, js)
			}
			for _, m := range aliasJob.FindAllSubmatch(js, -1) {
				if string(m[1]) != strconv.Itoa(n) {
					t.Errorf("run %d: %s mentions job-%s: %.300s", n, v.what, m[1], js)
					break
				}
			}
		}
	}
}

// runOf returns the run number of a context's run input.
func runOf(inputs *sync.Map, ctx context.Context) int {
	info, ok := runlet.RunInfoFrom(ctx)
	if !ok {
		return -1
	}
	n, ok := inputs.Load(info.RunID)
	if !ok {
		return -1
	}
	return n.(int)
}

// checkResult checks run n's Result: its answer, its calls' arguments and
// its results.
func checkResult(t *testing.T, n int, res *runlet.Result) {
	t.Helper()
	if res == nil {
		t.Errorf("run %d: no result", n)
		return
	}
	if want := fmt.Sprintf("answer job-%d", n); res.Output != want {
		t.Errorf("run %d: output %q, want %q", n, res.Output, want)
	}
	var calls, results int
	for _, m := range res.Messages {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case runlet.ToolCallPart:
				var in aliasIn
				if err := json.Unmarshal(p.Arguments, &in); err != nil {
					t.Errorf("run %d: call %d arguments %.200s: %v", n, calls, p.Arguments, err)
				}
				var want aliasIn
				_ = json.Unmarshal([]byte(aliasArgs(n, calls)), &want)
				if in != want {
					t.Errorf("run %d: call %d arguments %.200s, want %.200s", n, calls, p.Arguments, aliasArgs(n, calls))
				}
				calls++
			case runlet.ToolResultPart:
				var want aliasIn
				_ = json.Unmarshal([]byte(aliasArgs(n, results)), &want)
				if w := fmt.Sprintf("result-of-job-%d-%d-%d", n, results, len(want.Pad)); p.Content != w {
					t.Errorf("run %d: result %d %q, want %q", n, results, p.Content, w)
				}
				results++
			}
		}
	}
	if calls != aliasCalls(n) || results != calls {
		t.Errorf("run %d: %d calls and %d results, want %d", n, calls, results, aliasCalls(n))
	}
}

// aliasRuns is how many runs go at once: enough to share pooled buffers
// and the Model, few enough to stay fast under the race detector.
func aliasRuns() int {
	if raceEnabled {
		return 4 // runs 0 to 3: one, two and three calls, large arguments, escapes
	}
	return 12
}

// TestConcurrentRunsShareNothing runs aliasRuns() tool runs at once on one
// Runtime and Model of each adapter, streamed and not, with an error body
// to retry now and then, and checks that what each run handed out stays
// its own and unchanged.
func TestConcurrentRunsShareNothing(t *testing.T) {
	for _, ad := range aliasAdapters() {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", ad.name, stream), func(t *testing.T) {
				t.Parallel()
				srv := ad.srv()
				defer srv.Close()
				srv.SetReplyResponder(aliasResponder)
				// Error bodies, large and small, retried at once.
				retry := http.Header{"Retry-After-Ms": {"1"}}
				big := `{"error":{"message":"` + strings.Repeat("overloaded ", 8000) + `","type":"server_error"}}`
				srv.InjectFault(runlettest.Fault{Status: 500, Header: retry, Body: big},
					runlettest.Fault{Status: 429, Header: retry, Body: `{"error":{"message":"slow down","type":"rate_limit"}}`},
					runlettest.Fault{Status: 503, Header: retry, Body: big})

				var inputs sync.Map // run ID -> run number
				var k keeper
				hooks := runlet.Hooks{
					BeforeToolCall: func(ctx context.Context, call *runlet.ToolCallPart) (*runlet.ToolResultPart, error) {
						k.keep(t, runOf(&inputs, ctx), "BeforeToolCall call", *call)
						return nil, nil
					},
					AfterToolCall: func(ctx context.Context, call runlet.ToolCallPart, res *runlet.ToolResultPart) error {
						n := runOf(&inputs, ctx)
						k.keep(t, n, "AfterToolCall call", call)
						k.keep(t, n, "AfterToolCall result", *res)
						return nil
					},
				}
				observer := runlet.ObserverFunc(func(ctx context.Context, ev runlet.Event) {
					k.keep(t, runOf(&inputs, ctx), "observed "+fmt.Sprintf("%T", ev), ev)
				})
				store := runlet.NewMemoryStore()
				rt := runlet.NewRuntime(runlet.WithStore(store))
				agent := &runlet.Agent{Name: "a", Model: ad.model(srv.BaseURL(), aliasClient(t)), Tools: []runlet.Tool{aliasTool()}}

				var wg sync.WaitGroup
				results := make([]*runlet.Result, aliasRuns())
				for n := range aliasRuns() {
					wg.Go(func() {
						runID := fmt.Sprintf("run-%s-%v-%d", ad.name, stream, n)
						inputs.Store(runID, n)
						opts := []runlet.RunOption{runlet.WithRunID(runID), runlet.WithHooks(hooks), runlet.WithObservers(observer)}
						if n%2 == 1 { // odd runs keep a session, stored as each turn ends
							opts = append(opts, runlet.WithSession(fmt.Sprintf("session-%d", n)))
						}
						input := fmt.Sprintf("do job-%d", n)
						if !stream {
							res, err := rt.Run(t.Context(), agent, input, opts...)
							if err != nil {
								t.Errorf("run %d: %v", n, err)
							}
							results[n] = res
							k.keep(t, n, "Result", res)
							return
						}
						for ev, err := range rt.Stream(t.Context(), agent, input, opts...) {
							if err != nil {
								t.Errorf("run %d: %v", n, err)
								continue
							}
							k.keep(t, n, fmt.Sprintf("streamed %T", ev), ev)
							if f, ok := ev.(*runlet.RunFinished); ok {
								results[n] = f.Result
							}
						}
					})
				}
				wg.Wait()
				for n, res := range results {
					checkResult(t, n, res)
					if n%2 == 0 || res == nil {
						continue
					}
					stored, err := store.LoadSession(t.Context(), fmt.Sprintf("session-%d", n))
					if err != nil {
						t.Errorf("run %d: %v", n, err)
					}
					a, _ := json.Marshal(stored)
					b, _ := json.Marshal(res.Messages)
					if !bytes.Equal(a, b) {
						t.Errorf("run %d: session holds\n%.300s\nResult has\n%.300s", n, a, b)
					}
				}
				k.check(t)
			})
		}
	}
}

// TestConcurrentApprovalResume runs tool runs that need approval at once on
// one Runtime and Model of each adapter: each is interrupted, then resumed
// with its calls approved, and what the interrupted and the resumed run
// handed out stays each run's own and unchanged.
func TestConcurrentApprovalResume(t *testing.T) {
	for _, ad := range aliasAdapters() {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", ad.name, stream), func(t *testing.T) {
				t.Parallel()
				srv := ad.srv()
				defer srv.Close()
				srv.SetReplyResponder(aliasResponder)
				var inputs sync.Map
				var k keeper
				rt := runlet.NewRuntime()
				agent := &runlet.Agent{Name: "a", Model: ad.model(srv.BaseURL(), aliasClient(t)), Tools: []runlet.Tool{aliasTool(runlet.WithApproval())}}

				drive := func(n int, events func(func(runlet.Event, error) bool)) *runlet.Result {
					var res *runlet.Result
					for ev, err := range events {
						if err != nil {
							t.Errorf("run %d: %v", n, err)
							continue
						}
						k.keep(t, n, fmt.Sprintf("streamed %T", ev), ev)
						switch e := ev.(type) {
						case *runlet.RunFinished:
							res = e.Result
						case *runlet.RunInterrupted:
							res = e.Result
						}
					}
					return res
				}
				var wg sync.WaitGroup
				results := make([]*runlet.Result, aliasRuns())
				for n := range aliasRuns() {
					wg.Go(func() {
						runID := fmt.Sprintf("run-%s-%v-%d", ad.name, stream, n)
						inputs.Store(runID, n)
						input := fmt.Sprintf("do job-%d", n)
						var paused *runlet.Result
						if stream {
							paused = drive(n, rt.Stream(t.Context(), agent, input, runlet.WithRunID(runID)))
						} else {
							var err error
							if paused, err = rt.Run(t.Context(), agent, input, runlet.WithRunID(runID)); err != nil {
								t.Errorf("run %d: %v", n, err)
							}
						}
						if paused == nil || paused.Status != runlet.StateInterrupted || len(paused.Pending) != aliasCalls(n) {
							t.Errorf("run %d: not interrupted with its calls pending: %+v", n, paused)
							return
						}
						k.keep(t, n, "interrupted Result", paused)
						var decisions []runlet.Decision
						for _, c := range paused.Pending {
							decisions = append(decisions, runlet.Approve(c.ID))
						}
						if stream {
							results[n] = drive(n, rt.ResumeStream(t.Context(), agent, runID, decisions...))
						} else {
							res, err := rt.Resume(t.Context(), agent, runID, decisions...)
							if err != nil {
								t.Errorf("run %d: resume: %v", n, err)
							}
							results[n] = res
						}
						k.keep(t, n, "resumed Result", results[n])
					})
				}
				wg.Wait()
				for n, res := range results {
					checkResult(t, n, res)
				}
				k.check(t)
			})
		}
	}
}

// TestAppendToArgumentsChangesNoOtherCall: a run's calls' Arguments are
// each their own. An adapter that slices them out of one response body
// must not leave the body's later bytes in their capacity, where an
// append to one call's arguments (a hook's, an application's) would
// overwrite the next call's.
func TestAppendToArgumentsChangesNoOtherCall(t *testing.T) {
	for _, ad := range aliasAdapters() {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", ad.name, stream), func(t *testing.T) {
				srv := ad.srv()
				defer srv.Close()
				srv.SetReplyResponder(aliasResponder)
				rt := runlet.NewRuntime()
				agent := &runlet.Agent{Name: "a", Model: ad.model(srv.BaseURL(), aliasClient(t)), Tools: []runlet.Tool{aliasTool()}}
				const n = 5 // three calls, small arguments
				var res *runlet.Result
				var err error
				if stream {
					for ev, e := range rt.Stream(t.Context(), agent, fmt.Sprintf("do job-%d", n)) {
						if f, ok := ev.(*runlet.RunFinished); ok {
							res = f.Result
						}
						if e != nil {
							err = e
						}
					}
				} else {
					res, err = rt.Run(t.Context(), agent, fmt.Sprintf("do job-%d", n))
				}
				if err != nil {
					t.Fatal(err)
				}
				checkResult(t, n, res)
				var calls []runlet.ToolCallPart
				for _, m := range res.Messages {
					calls = append(calls, m.ToolCalls()...)
				}
				before := make([]string, len(calls))
				for i, c := range calls {
					before[i] = string(c.Arguments)
				}
				for i, c := range calls {
					_ = append(c.Arguments, strings.Repeat("X", 64)...)
					for j, d := range calls {
						if string(d.Arguments) != before[j] {
							t.Fatalf("appending to call %d's arguments changed call %d's: %s", i, j, d.Arguments)
						}
					}
				}
				checkResult(t, n, res)
				_ = slices.Clone(calls)
			})
		}
	}
}
