package temporal

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// The integration tests run against a real Temporal server: the dev server
// binary of internal/devserver (go.temporal.io/server's temporaltest, on a
// free loopback port with an in-memory database). temporal/ci.sh builds it
// and sets RUNLET_TEMPORAL_DEVSERVER to its path. Or a server that is
// already running, such as the Temporal CLI's `temporal server start-dev`:
// RUNLET_TEMPORAL_ADDRESS=127.0.0.1:7233 (and RUNLET_TEMPORAL_NAMESPACE,
// "default" if unset), which wins over RUNLET_TEMPORAL_DEVSERVER. Without
// either the tests are skipped, except on CI, where they fail.
const (
	devserverEnv  = "RUNLET_TEMPORAL_DEVSERVER"
	serverAddrEnv = "RUNLET_TEMPORAL_ADDRESS"
	serverNSEnv   = "RUNLET_TEMPORAL_NAMESPACE"
)

type devServer struct {
	Address   string `json:"address"`
	Namespace string `json:"namespace"`
	cmd       *exec.Cmd
	stdin     io.WriteCloser
}

var (
	serverOnce sync.Once
	server     *devServer
	serverErr  string
)

// startServer starts the dev server once for the test binary; stopServer
// (from TestMain) stops it.
func startServer(t *testing.T) *devServer {
	t.Helper()
	serverOnce.Do(func() {
		if addr := os.Getenv(serverAddrEnv); addr != "" {
			server = &devServer{Address: addr, Namespace: cmp.Or(os.Getenv(serverNSEnv), "default")}
			return
		}
		path := os.Getenv(devserverEnv)
		if path == "" {
			serverErr = devserverEnv + " is not set: build the dev server with temporal/ci.sh (or go build ./internal/devserver in its module) and point it there, or set " + serverAddrEnv + " to a running server's host:port (temporal server start-dev: 127.0.0.1:7233)"
			return
		}
		cmd := exec.Command(path, "-watch-stdin", "-max-lifetime", "20m")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			serverErr = err.Error()
			return
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			serverErr = err.Error()
			return
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			serverErr = "starting the dev server: " + err.Error()
			return
		}
		line, err := bufio.NewReader(out).ReadBytes('\n')
		s := &devServer{cmd: cmd, stdin: stdin}
		if err == nil {
			err = json.Unmarshal(line, s)
		}
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			serverErr = "reading the dev server's address: " + err.Error()
			return
		}
		go func() { _, _ = io.Copy(io.Discard, out) }()
		server = s
	})
	if server == nil {
		if os.Getenv("CI") != "" {
			t.Fatal(serverErr)
		}
		t.Skip(serverErr)
	}
	return server
}

func stopServer() {
	if server == nil || server.cmd == nil { // none, or one we did not start
		return
	}
	_ = server.stdin.Close()
	done := make(chan struct{})
	go func() { _ = server.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = server.cmd.Process.Kill()
		<-done
	}
}

// quietLogger keeps the SDK's logs out of the test output.
func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func dial(t *testing.T, s *devServer) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: s.Address, Namespace: s.Namespace, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
