package redis

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
)

// The crash test re-executes this test binary as a child process that writes
// turns and checkpoints to the Redis server in a loop, kills it with SIGKILL
// at a random moment (often in the middle of sending a turn), and checks
// what a restarted application would find in Redis.

const (
	crashEnv       = "RUNLET_REDIS_CRASH_CHILD" // key prefix for the child; the URL is in crashURLEnv
	crashURLEnv    = "RUNLET_REDIS_CRASH_URL"
	crashSession   = "crash-session"
	crashRun       = "crash-run"
	crashTurnSize  = 4 // an assistant message with 3 tool calls, then 3 tool results
	crashChildLife = 30 * time.Second
)

// crashHelper runs the child's write loop when this binary was started as
// the crash test's child; it never returns then. Otherwise it returns false.
func crashHelper() bool {
	prefix := os.Getenv(crashEnv)
	if prefix == "" {
		return false
	}
	if err := crashChild(os.Getenv(crashURLEnv), prefix); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	os.Exit(0)
	return true
}

// crashTurn returns turn n: the assistant's tool calls and their results,
// with payloads of random size (up to 3 x 256 KiB) so that kills often land
// while the child is still sending the turn.
// The same n always gives the same turn, so a restarted child can redo the
// bookkeeping for a stored turn without reading it back.
func crashTurn(n int) []runlet.Message {
	r := rand.New(rand.NewPCG(uint64(n), 0x5eed))
	call := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.ReasoningPart{Text: fmt.Sprintf("turn %d: three lookups", n), Signature: "sig", Provider: "anthropic"},
	}}
	turn := []runlet.Message{call}
	for c := range crashTurnSize - 1 {
		id := fmt.Sprintf("call_%d_%d", n, c)
		payload := strings.Repeat("x", r.IntN(256<<10))
		call.Parts = append(call.Parts, runlet.ToolCallPart{ID: id, Name: "lookup", Arguments: json.RawMessage(fmt.Sprintf(`{"turn":%d,"call":%d}`, n, c))})
		turn = append(turn, runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{
			runlet.ToolResultPart{CallID: id, Name: "lookup", Content: payload},
		}})
	}
	turn[0] = call
	return turn
}

// crashChild appends turns, saving a checkpoint and a state counter after
// each, until it is killed (or, as a safety net, after crashChildLife). It
// prints "ready" once the store is open and "turn N" once N turns are
// committed (the state counter written), so the parent can kill it after
// a known number of commits instead of after a guessed delay. It prints
// "appending N" just before it appends turn N and "append took µs" after,
// so the parent can aim its kill at the append.
func crashChild(url, prefix string) error {
	ctx := context.Background()
	s, err := Open(ctx, url, WithPrefix(prefix))
	if err != nil {
		return err
	}
	// The state counter trails the session by at most one turn (a kill
	// between the append and the counter update); the append's own check
	// tells which.
	n := 0
	if v, err := s.GetState(ctx, crashSession, "turns"); err == nil {
		n, _ = strconv.Atoi(string(v))
	} else if !errors.Is(err, runlet.ErrNotFound) {
		return err
	}
	fmt.Println("ready")
	deadline := time.Now().Add(crashChildLife)
	for ; time.Now().Before(deadline); n++ {
		turn := crashTurn(n)
		fmt.Println("appending", n+1)
		start := time.Now()
		err := s.AppendSession(ctx, crashSession, n*crashTurnSize, turn)
		fmt.Println("append took", time.Since(start).Microseconds())
		if errors.Is(err, runlet.ErrConflict) {
			// The counter lagged: the last child was killed between the
			// append of turn n and the bookkeeping after it. Turn n is
			// stored (the parent checks it is this one); redo the
			// bookkeeping, as a recovering application would.
		} else if err != nil {
			return err
		}
		cp := &runlet.Checkpoint{
			RunID: crashRun, SessionID: crashSession, Turn: n + 1,
			HistoryLen: n * crashTurnSize, Messages: turn,
			Pending: turn[0].ToolCalls(), CreatedAt: time.Now(),
		}
		if err := s.SaveCheckpoint(ctx, cp); err != nil {
			return err
		}
		if err := s.SetState(ctx, crashSession, "turns", []byte(strconv.Itoa(n+1))); err != nil {
			return err
		}
		fmt.Println("turn", n+1)
	}
	return s.Close()
}

// TestCrashLeavesCompleteTurns kills the child ten times. Every third kill
// lands in start-up or Open, after a random delay; the others come once the
// child has acknowledged 1 to 3 further commits, so each of those runs
// commits something however slow the machine is, and every turn the child
// acknowledged before it died must be in Redis. Nothing here depends on
// timing: a busy machine only changes where in a write the kill lands.
func TestCrashLeavesCompleteTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	url, prefix := testURL(t), testPrefix(t)
	const iterations = 10
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	prev, loopKills := 0, 0
	for i := range iterations {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+prefix, crashURLEnv+"="+url)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The reader records the last "turn N" and "appending N" the
		// child printed and ticks on every line, until the pipe closes
		// when the child dies.
		var acked, appending, appendMicros atomic.Int64
		acked.Store(-1) // not ready yet
		tick := make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if sc.Text() == "ready" {
					acked.Store(0)
				} else if n, ok := strings.CutPrefix(sc.Text(), "turn "); ok {
					v, _ := strconv.Atoi(n)
					acked.Store(int64(v))
				} else if n, ok := strings.CutPrefix(sc.Text(), "appending "); ok {
					v, _ := strconv.Atoi(n)
					appending.Store(int64(v))
				} else if n, ok := strings.CutPrefix(sc.Text(), "append took "); ok {
					v, _ := strconv.Atoi(n)
					appendMicros.Store(int64(v))
				}
				select {
				case tick <- struct{}{}:
				default:
				}
			}
			io.Copy(io.Discard, stdout)
		}()
		// waitFor waits until ok holds.
		waitFor := func(what string, ok func() bool) {
			guard := time.After(30 * time.Second)
			for !ok() {
				select {
				case <-tick:
				case <-done:
					cmd.Wait()
					t.Fatalf("child died before %s:\n%s", what, stderr.String())
				case <-guard:
					cmd.Process.Kill()
					<-done
					cmd.Wait()
					t.Fatalf("child not %s after 30s:\n%s", what, stderr.String())
				}
			}
		}
		var how string
		if i%3 == 0 {
			delay := time.Duration(r.IntN(60)) * time.Millisecond
			how = fmt.Sprintf("%v after start", delay)
			time.Sleep(delay)
		} else {
			waitFor("ready", func() bool { return acked.Load() >= 0 })
			want := int64(prev + 1 + r.IntN(3))
			waitFor(fmt.Sprintf("at %d committed turns", want), func() bool { return acked.Load() >= want })
			// Aim at the next append: once the child says it has begun
			// it, a random pause of a half to once the last append's
			// duration (most of which is encoding) moves the kill around
			// its sending and the writes after it. No outcome depends on
			// how long the pause is.
			waitFor(fmt.Sprintf("appending turn %d", want+1), func() bool { return appending.Load() > want })
			d := max(appendMicros.Load(), 2)
			pause := time.Duration(d/2+r.Int64N(d/2+1)) * time.Microsecond
			time.Sleep(pause)
			how = fmt.Sprintf("%v after the child began appending turn %d", pause, want+1)
			loopKills++
		}
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		<-done // every acknowledgement the child printed has been read
		cmd.Wait()
		if strings.Contains(stderr.String(), "crash child:") {
			t.Fatalf("child failed before it was killed:\n%s", stderr.String())
		}
		turns := checkCrashed(t, url, prefix)
		t.Logf("run %d: killed %s; acknowledged %d, Redis holds %d complete turns", i, how, max(acked.Load(), 0), turns)
		if turns < prev {
			t.Fatalf("turns went from %d to %d: committed turns were lost", prev, turns)
		}
		if int64(turns) < acked.Load() {
			t.Fatalf("the child acknowledged %d committed turns but Redis holds %d", acked.Load(), turns)
		}
		prev = turns
	}
	t.Logf("%d kills, %d of them in the write loop; %d turns committed and intact", iterations, loopKills, prev)
}

// checkCrashed checks what a killed child left in Redis: whole turns and a
// checkpoint that matches them, as a restarted application would read them.
// It returns the number of turns.
func checkCrashed(t *testing.T, url, prefix string) int {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, url, WithPrefix(prefix))
	if err != nil {
		t.Fatalf("reopening after a crash: %v", err)
	}
	defer s.Close()
	msgs, err := s.LoadSession(ctx, crashSession)
	if err != nil {
		t.Fatalf("loading the session after a crash: %v", err)
	}
	if len(msgs)%crashTurnSize != 0 {
		t.Fatalf("%d messages: not a whole number of %d-message turns", len(msgs), crashTurnSize)
	}
	turns := len(msgs) / crashTurnSize
	for n := range turns {
		turn := msgs[n*crashTurnSize : (n+1)*crashTurnSize]
		calls := turn[0].ToolCalls()
		if turn[0].Role != runlet.RoleAssistant || len(calls) != crashTurnSize-1 {
			t.Fatalf("turn %d starts with %s message with %d tool calls", n, turn[0].Role, len(calls))
		}
		for c, call := range calls {
			res, ok := turn[c+1].Parts[0].(runlet.ToolResultPart)
			if !ok || res.CallID != call.ID || call.ID != fmt.Sprintf("call_%d_%d", n, c) {
				t.Fatalf("turn %d: tool call %q has no matching result (got %#v)", n, call.ID, turn[c+1].Parts[0])
			}
		}
		got, _ := json.Marshal(turn)
		want, _ := json.Marshal(crashTurn(n))
		if !bytes.Equal(got, want) {
			t.Fatalf("turn %d differs from what the child wrote", n)
		}
	}

	cp, err := s.LoadCheckpoint(ctx, crashRun)
	if turns == 0 {
		if err == nil && cp.Turn > 1 {
			t.Fatalf("checkpoint of turn %d without any turn stored", cp.Turn)
		}
		return 0
	}
	if turns == 1 && errors.Is(err, runlet.ErrNotFound) {
		return turns // killed between the first append and its checkpoint
	}
	if err != nil {
		t.Fatalf("loading the checkpoint after a crash (%d turns stored): %v", turns, err)
	}
	// The checkpoint is saved right after its turn: it is the last turn's
	// or, killed in between, the one before.
	if cp.Turn != turns && cp.Turn != turns-1 {
		t.Fatalf("checkpoint of turn %d with %d turns stored", cp.Turn, turns)
	}
	if cp.Turn == turns {
		last := msgs[len(msgs)-crashTurnSize:]
		if len(cp.Messages) != crashTurnSize || cp.Messages[0].ToolCalls()[0].ID != last[0].ToolCalls()[0].ID ||
			cp.Messages[3].Parts[0].(runlet.ToolResultPart).Content != last[3].Parts[0].(runlet.ToolResultPart).Content {
			t.Fatal("the latest checkpoint does not hold the latest turn")
		}
	}
	if v, err := s.GetState(ctx, crashSession, "turns"); err == nil {
		if n, _ := strconv.Atoi(string(v)); n > cp.Turn || n < cp.Turn-1 {
			t.Fatalf("state says %d turns, checkpoint %d", n, cp.Turn)
		}
	} else if !errors.Is(err, runlet.ErrNotFound) || turns > 1 {
		t.Fatalf("state after a crash: %v", err)
	}
	return turns
}
