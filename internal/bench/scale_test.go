package bench_test

// The scale test: thousands of concurrent streaming runs (each a tool call,
// then a streamed answer) against a loopback server in a separate process,
// so the measured heap is the client's alone and the file descriptors are
// split between two processes. It holds every answer stream after its first
// delta until all runs have one, measures the heap and goroutines with all
// of them in flight, then lets them finish. A first round does the same
// exchanges with bare net/http (no decoding, 512-byte reads): what the HTTP
// connections themselves hold, to subtract. Opt-in, as it takes a while:
//
//	RUNLET_SCALE=10000 go test -run TestScale -v ./internal/bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
)

const scaleAnswerDeltas = 10

func TestScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RUNLET_SCALE"))
	if n <= 0 {
		t.Skip("set RUNLET_SCALE=10000 to run")
	}
	base := startScaleServer(t)
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxIdleConns: n, DisableCompression: true}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()

	conn := scaleRound(t, n, base, hc, func(first func()) error { return bareRun(hc, base, first) })
	tr.CloseIdleConnections()
	weather := runlet.NewTool("get_weather", "Current weather for a city.", func(ctx context.Context, in e2eWeather) (string, error) {
		return "sunny in " + in.City, nil
	})
	agent := &runlet.Agent{Instructions: "Be brief.", Tools: []runlet.Tool{weather},
		Model: openai.NewChatCompletions(openai.Config{BaseURL: base, APIKey: "test", Model: "gpt-4o-mini", HTTPClient: hc})}
	rt := runlet.NewRuntime()
	rl := scaleRound(t, n, base, hc, func(first func()) error {
		deltas := 0
		for ev, err := range rt.Stream(context.Background(), agent, "Weather in Shanghai?") {
			if err != nil {
				return err
			}
			if _, ok := ev.(*runlet.TextDelta); ok {
				if deltas++; deltas == 1 {
					first()
				}
			}
		}
		if deltas != scaleAnswerDeltas {
			return fmt.Errorf("%d deltas", deltas)
		}
		return nil
	})
	t.Logf("%d concurrent streaming runs, GOMAXPROCS %d, load %s", n, runtime.GOMAXPROCS(0), loadavg())
	for _, r := range []struct {
		name string
		s    scaleStats
	}{{"bare net/http", conn}, {"runlet", rl}} {
		t.Logf("%-13s total %v; in flight: heap %.1f MiB (%.1f KiB per run), stacks %.1f KiB per run, %.2f goroutines per run; peak heap %.1f MiB",
			r.name, r.s.total.Round(time.Millisecond), mib(r.s.heap), kib(r.s.heap)/float64(n), kib(r.s.stack)/float64(n), float64(r.s.goroutines)/float64(n), mib(r.s.peak))
	}
	extra := (float64(rl.heap) - float64(conn.heap)) / float64(n) / 1024
	t.Logf("runlet over bare net/http: %.1f KiB heap per in-flight run, %.2f goroutines per run", extra, float64(rl.goroutines-conn.goroutines)/float64(n))
	if extra > 32 {
		t.Errorf("%.1f KiB heap per in-flight run beyond the HTTP connection's, want at most 32", extra)
	}
}

type scaleStats struct {
	total       time.Duration
	heap, stack uint64 // with every run in flight, after a GC, over the idle process
	peak        uint64 // highest heap sampled during the round
	goroutines  int
}

func scaleRound(t *testing.T, n int, base string, hc *http.Client, run func(first func()) error) scaleStats {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()
	var peak atomic.Uint64
	stopSampling := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	defer close(stopSampling)

	start := time.Now()
	var reached atomic.Int64
	all := make(chan struct{})
	first := func() {
		if reached.Add(1) == int64(n) {
			close(all)
		}
	}
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := run(first); err != nil {
				errs <- err
			}
		})
	}
	select {
	case <-all:
	case err := <-errs:
		t.Fatalf("a run failed before all were in flight: %v", err)
	case <-time.After(10 * time.Minute):
		t.Fatalf("only %d of %d runs in flight after 10 minutes", reached.Load(), n)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	st := scaleStats{heap: m1.HeapAlloc - m0.HeapAlloc, stack: m1.StackInuse - m0.StackInuse, goroutines: runtime.NumGoroutine() - g0}
	resp, err := hc.Post(base+"/release", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wg.Wait()
	st.total = time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st.peak = peak.Load()
	return st
}

// bareRun is the same two exchanges with net/http alone.
func bareRun(hc *http.Client, base string, first func()) error {
	resp, err := hc.Post(base+"/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp, err = hc.Post(base+"/chat/completions", "application/json", strings.NewReader(`{"stream":true,"messages":[{"role":"tool"}]}`))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var buf [512]byte
	got := 0
	for !bytes.Contains(buf[:got], []byte(`"content"`)) {
		if got == len(buf) {
			return fmt.Errorf("no delta in %q", buf[:got])
		}
		m, err := resp.Body.Read(buf[got:])
		if err != nil {
			return err
		}
		got += m
	}
	first()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// startScaleServer runs TestScaleServer in a child process and returns its
// base URL.
func startScaleServer(t *testing.T) string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestScaleServer$")
	cmd.Env = append(os.Environ(), "RUNLET_SCALE_SERVER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the server exits when its stdin closes
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return "http://" + addr + "/v1"
		}
	}
	t.Fatalf("scale server did not start: %v", sc.Err())
	return ""
}

// TestScaleServer is the scale test's server process (it does nothing
// unless started by TestScale). Answers without a tool result stream a tool
// call; answers to one stream a first delta, wait for /release, then the
// rest.
func TestScaleServer(t *testing.T) {
	if os.Getenv("RUNLET_SCALE_SERVER") == "" {
		t.Skip("started by TestScale")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/release", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		close(release)
		release = make(chan struct{})
		mu.Unlock()
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		wait := release
		mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) {
			fmt.Fprintf(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, finish)
		}
		if !bytes.Contains(body, []byte(`"role":"tool"`)) {
			chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Shanghai\"}"}}]}`, "null")
			chunk(`{}`, `"tool_calls"`)
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		chunk(`{"role":"assistant","content":"sun "}`, "null")
		w.(http.Flusher).Flush()
		select {
		case <-wait:
		case <-r.Context().Done():
			return
		}
		for range scaleAnswerDeltas - 1 {
			chunk(`{"content":"sun "}`, "null")
		}
		chunk(`{}`, `"stop"`)
		io.WriteString(w, "data: [DONE]\n\n")
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fmt.Printf("ADDR %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
func kib(b uint64) float64 { return float64(b) / (1 << 10) }
