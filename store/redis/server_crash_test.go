package redis

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TestServerCrashLeavesCompleteTurns runs a Redis server of its own with
// appendonly yes and appendfsync always, has the crash test's child write
// turns to it, SIGKILLs the server once the child has acknowledged 1-3
// more turns and begun the next append, restarts it from its AOF, and
// checks that it holds only whole turns, every acknowledged one among them
// (the package doc's claim for appendfsync always).
func TestServerCrashLeavesCompleteTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills Redis servers")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (run .ci/redis.sh as root)")
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	url := "redis://127.0.0.1:" + port + "/0"
	start := func() *exec.Cmd {
		srv := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--dir", dir,
			"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no")
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() }) // if a check fails first
		o, _ := goredis.ParseURL(url)
		c := goredis.NewClient(o)
		defer c.Close()
		guard := time.Now().Add(30 * time.Second)
		for c.Ping(context.Background()).Err() != nil {
			if time.Now().After(guard) {
				srv.Process.Kill()
				srv.Wait()
				t.Fatal("the test's redis-server did not answer within 30s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		return srv
	}
	const prefix = "crash:"
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	prev := 0
	for i := range 3 {
		srv := start()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+prefix, crashURLEnv+"="+url)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acked, appending, micros atomic.Int64
		tick := make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				line := sc.Text()
				for p, v := range map[string]*atomic.Int64{"turn ": &acked, "appending ": &appending, "append took ": &micros} {
					if s, ok := strings.CutPrefix(line, p); ok {
						n, _ := strconv.Atoi(s)
						v.Store(int64(n))
					}
				}
				select {
				case tick <- struct{}{}:
				default:
				}
			}
			io.Copy(io.Discard, stdout)
		}()
		waitFor := func(what string, ok func() bool) {
			guard := time.After(30 * time.Second)
			for !ok() {
				select {
				case <-tick:
				case <-done:
					srv.Process.Kill()
					srv.Wait()
					cmd.Wait()
					t.Fatalf("child died before %s:\n%s", what, stderr.String())
				case <-guard:
					cmd.Process.Kill()
					srv.Process.Kill()
					<-done
					cmd.Wait()
					srv.Wait()
					t.Fatalf("child not %s after 30s:\n%s", what, stderr.String())
				}
			}
		}
		want := int64(prev + 1 + r.IntN(3))
		waitFor(fmt.Sprintf("at %d acknowledged turns", want), func() bool { return acked.Load() >= want })
		waitFor(fmt.Sprintf("appending turn %d", want+1), func() bool { return appending.Load() > want })
		d := max(micros.Load(), 2)
		pause := time.Duration(d/2+r.Int64N(d/2+1)) * time.Microsecond
		time.Sleep(pause)
		srv.Process.Kill() // SIGKILL the server
		srv.Wait()
		cmd.Process.Kill()
		<-done
		cmd.Wait()

		srv = start() // loads the AOF
		turns := checkCrashed(t, url, prefix)
		srv.Process.Kill()
		srv.Wait()
		t.Logf("run %d: server killed %v after the child began appending turn %d; acknowledged %d, the restarted server holds %d complete turns",
			i, pause, want+1, acked.Load(), turns)
		if int64(turns) < acked.Load() {
			t.Fatalf("the child acknowledged %d turns but the restarted server holds %d", acked.Load(), turns)
		}
		if turns < prev {
			t.Fatalf("turns went from %d to %d", prev, turns)
		}
		prev = turns
	}
}
