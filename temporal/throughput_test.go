package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/client"
)

// benchEnv, when set, makes TestThroughput run: N=benchEnv concurrent
// durable runs (e.g. RUNLET_TEMPORAL_BENCH=100) of the bench agent
// (benchTurns model calls, a tool call between each) on one worker
// process, then on two. It is skipped otherwise: it measures, it does not
// check behaviour, and it loads the machine.
const benchEnv = "RUNLET_TEMPORAL_BENCH"

func TestThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(benchEnv))
	if n <= 0 {
		t.Skip(benchEnv + " is not set: no throughput run")
	}
	s := startServer(t)
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			throughput(t, s, n, workers)
		})
	}
}

func throughput(t *testing.T, s *devServer, n, workers int) {
	c := dial(t, s)
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	queue := fmt.Sprintf("bench-%s-%d", t.Name(), time.Now().UnixNano())
	var kids []*child
	for i := range workers {
		kids = append(kids, startChild(t, s, string(rune('A'+i)), queue, log.path))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	starts := make([]time.Time, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		ids[i] = uniqueID("bench")
		wg.Add(1)
		go func() {
			defer wg.Done()
			starts[i] = time.Now()
			run, err := Start(ctx, c, client.StartWorkflowOptions{ID: ids[i], TaskQueue: queue}, RunInput{Agent: "bench", Input: "go"})
			if err == nil {
				var res *runlet.Result
				res, err = Wait(ctx, run)
				if err == nil && res.Output != "done" {
					err = fmt.Errorf("output %q", res.Output)
				}
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Per-turn latency: from the run's start to its first model call, and
	// from each model call to the next (a tool activity and three workflow
	// tasks between them).
	calls := map[string][]int64{}
	perWorker := map[string]int{}
	for _, l := range log.lines() {
		f := strings.Split(l, ":")
		if len(f) != 5 || f[0] != "bench" {
			continue
		}
		ns, _ := strconv.ParseInt(f[3], 10, 64)
		calls[f[1]] = append(calls[f[1]], ns)
		perWorker[f[4]]++
	}
	var first, lat []time.Duration
	for i, id := range ids {
		ts := calls[id]
		if len(ts) != benchTurns {
			t.Fatalf("run %s: %d model calls logged, want %d", id, len(ts), benchTurns)
		}
		slices.Sort(ts)
		first = append(first, time.Duration(ts[0]-starts[i].UnixNano()))
		for j := 1; j < len(ts); j++ {
			lat = append(lat, time.Duration(ts[j]-ts[j-1]))
		}
	}
	slices.Sort(first)
	slices.Sort(lat)
	pct := func(d []time.Duration, p float64) time.Duration {
		return d[min(len(d)-1, int(p*float64(len(d))))].Round(time.Millisecond)
	}
	var rss []string
	var cpu time.Duration
	for _, k := range kids {
		rss = append(rss, peakRSS(k.cmd.Process.Pid))
		cpu += cpuTime(k.cmd.Process.Pid)
	}
	st := stats(t, c, ids[0])
	t.Logf("%d runs x %d turns on %d worker(s): %.1f s, %.1f runs/s, %.1f turns/s; turn to turn p50 %v p99 %v; start to first model call p50 %v p99 %v; model calls per worker %v; worker peak RSS %v; worker CPU %v (%v a turn); one run's history: %d events, %d bytes",
		n, benchTurns, workers, took.Seconds(), float64(n)/took.Seconds(), float64(n*benchTurns)/took.Seconds(),
		pct(lat, 0.50), pct(lat, 0.99), pct(first, 0.50), pct(first, 0.99), perWorker, rss, cpu.Round(time.Millisecond), (cpu / time.Duration(n*benchTurns)).Round(10*time.Microsecond), st.events, st.bytes)
}

// peakRSS reads a process's peak resident set size (VmHWM) from /proc.
func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}

// cpuTime reads a process's user and system CPU time from /proc (in
// clock ticks of 10 ms, Linux's USER_HZ).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	k, _ := strconv.Atoi(f[12])
	return time.Duration(u+k) * 10 * time.Millisecond
}
