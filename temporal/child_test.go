package temporal

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.uber.org/goleak"
)

// A worker in a child process: the test binary run again with childEnv set
// (TestMain runs the worker instead of the tests). The parent kills it with
// SIGKILL to show a crash, or closes its standard input to stop it.
const (
	childEnv   = "RUNLET_TEMPORAL_CHILD" // the worker's name, "A" or "B"
	addrEnv    = "RUNLET_TEMPORAL_ADDR"
	nsEnv      = "RUNLET_TEMPORAL_NS"
	queueEnv   = "RUNLET_TEMPORAL_QUEUE"
	execLogEnv = "RUNLET_TEMPORAL_EXECLOG"
	// payloadDirEnv, when set, gives the workers a DirPayloadStore there.
	payloadDirEnv = "RUNLET_TEMPORAL_PAYLOAD_DIR"
)

// The child workers' long agent: childLongTurns fetches of childLongSize
// bytes; worker A holds fetch 12 until it is killed.
const childLongTurns, childLongSize = 30, 20 << 10

// benchTurns is how many model calls a run of the bench agent makes.
const benchTurns = 4

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChildWorker(name))
	}
	code := m.Run()
	stopServer()
	// Workers, clients, test environments and tools stopped cleanly.
	if err := goleak.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, "goroutines left after the tests:", err)
		code = 1
	}
	os.Exit(code)
}

// execLog appends one line per execution to a file shared by the parent
// and its worker processes.
type execLog struct {
	mu   sync.Mutex
	path string
}

func (l *execLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", args...)
}

func (l *execLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, _ := os.ReadFile(l.path)
	return strings.Fields(string(b))
}

func (l *execLog) count(prefix string) int {
	n := 0
	for _, s := range l.lines() {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// childAgents are the agents of the crash and approval tests. worker names
// the process, so the log says who ran what; worker "A" holds the "hold"
// tool until it is killed.
func childAgents(worker string, log *execLog) []*runlet.Agent {
	turn := func(req *runlet.ModelRequest) int {
		n := 1
		for _, m := range req.Messages {
			if m.Role == runlet.RoleAssistant {
				n++
			}
		}
		return n
	}
	lastResults := func(req *runlet.ModelRequest) []string {
		var out []string
		last := req.Messages[len(req.Messages)-1]
		for _, p := range last.Parts {
			if r, ok := p.(runlet.ToolResultPart); ok {
				out = append(out, r.Content)
			}
		}
		return out
	}
	trip := &runlettest.Model{Func: func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
		n := turn(req)
		log.add("model:%d:%s", n, worker)
		switch n {
		case 1:
			return runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`), runlettest.Call("c2", "get_weather", `{"city":"Rome"}`))
		case 2:
			return runlettest.ToolCallReply(runlettest.Call("c3", "hold", `{}`))
		}
		return runlettest.TextReply("trip: " + strings.Join(lastResults(req), "; "))
	}}
	weather := runlet.NewTool("get_weather", "Weather.", func(_ context.Context, in cityArgs) (string, error) {
		log.add("tool:%s:%s", in.City, worker)
		return "sunny in " + in.City, nil
	})
	hold := runlet.NewTool("hold", "Holds.", func(ctx context.Context, _ struct{}) (string, error) {
		log.add("tool:hold:%s", worker)
		if worker == "A" {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "held by " + worker, nil
	})
	mailer := &runlettest.Model{Func: func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
		log.add("model:%d:%s", turn(req), worker)
		if turn(req) == 1 {
			return runlettest.ToolCallReply(runlettest.Call("m1", "send_mail", `{"city":"Draft"}`))
		}
		return runlettest.TextReply("mailer: " + strings.Join(lastResults(req), "; "))
	}}
	mail := runlet.NewTool("send_mail", "Sends mail.", func(ctx context.Context, in cityArgs) (string, error) {
		key := IdempotencyKey(ctx)
		log.add("tool:mail:%s:%s", worker, key)
		return "sent " + in.City, nil
	}, runlet.WithApproval())
	long := longAgentWith(childLongTurns, childLongSize, func(ctx context.Context, n int) error {
		log.add("fetch:%d:%s", n, worker)
		if worker == "A" && n == 12 {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	// typed: looks the weather up with "slow" (held by A until it is
	// killed), then answers a forecast without "temp" until told.
	typedM := typedModel(1)
	typed := &runlettest.Model{Func: func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		log.add("typed:model:%d:%s", len(req.Messages), worker)
		return typedM.Func(ctx, req)
	}}
	slow := runlet.NewTool("get_weather", "Weather.", func(ctx context.Context, in cityArgs) (string, error) {
		log.add("tool:slow:%s", worker)
		if worker == "A" {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "21 degrees in " + in.City, nil
	})
	// bench: benchTurns model calls, a tool call on each but the last; each
	// model call logs when it ran, for the throughput test.
	bench := &runlettest.Model{Func: func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		n := turn(req)
		ri, _ := runlet.RunInfoFrom(ctx)
		log.add("bench:%s:%d:%d:%s", ri.RunID, n, time.Now().UnixNano(), worker)
		if n < benchTurns {
			return runlettest.ToolCallReply(runlettest.Call(fmt.Sprintf("e%d", n), "echo", `{"city":"x"}`))
		}
		return runlettest.TextReply("done")
	}}
	echo := runlet.NewTool("echo", "Echoes.", func(_ context.Context, in cityArgs) (string, error) { return in.City, nil })
	return []*runlet.Agent{
		{Name: "bench", Model: bench, Tools: []runlet.Tool{echo}},
		{Name: "typed", Model: typed, Tools: []runlet.Tool{slow}},
		{Name: "trip", Model: trip, Tools: []runlet.Tool{weather, hold}},
		{Name: "mailer", Model: mailer, Tools: []runlet.Tool{mail}},
		long,
	}
}

// childConfig has short heartbeat and retry intervals, so that a crash is
// noticed and recovered from in seconds.
func childConfig(agents []*runlet.Agent) Config {
	retry := &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: time.Second, MaximumAttempts: 10}
	return Config{
		Agents:        agents,
		ModelActivity: ActivityOptions{StartToClose: time.Minute, Retry: retry},
		ToolActivity:  ActivityOptions{StartToClose: time.Minute, Heartbeat: 3 * time.Second, Retry: retry},
	}
}

func workerOptions() worker.Options {
	return worker.Options{StickyScheduleToStartTimeout: time.Second}
}

func runChildWorker(name string) int {
	c, err := client.Dial(client.Options{HostPort: os.Getenv(addrEnv), Namespace: os.Getenv(nsEnv), Logger: quietLogger()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child worker:", err)
		return 1
	}
	defer c.Close()
	cfg := childConfig(childAgents(name, &execLog{path: os.Getenv(execLogEnv)}))
	if dir := os.Getenv(payloadDirEnv); dir != "" {
		if cfg.Payloads, err = NewDirPayloadStore(dir); err != nil {
			fmt.Fprintln(os.Stderr, "child worker:", err)
			return 1
		}
	}
	d, err := New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child worker:", err)
		return 1
	}
	w := worker.New(c, os.Getenv(queueEnv), workerOptions())
	d.Register(w)
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "child worker:", err)
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it or dies
	w.Stop()
	return 0
}

// child is a worker process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startChild(t *testing.T, s *devServer, name, queue, logPath string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+name, addrEnv+"="+s.Address, nsEnv+"="+s.Namespace,
		queueEnv+"="+queue, execLogEnv+"="+logPath)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, stdin: stdin}
	t.Cleanup(ch.stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("worker %s did not start: %q %v", name, line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return ch
}

// kill ends the worker at once, as a crash would.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

func (c *child) stop() {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
