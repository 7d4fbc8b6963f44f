// Command devserver runs a real Temporal server in-process for the tests of
// the temporal module: go.temporal.io/server's temporaltest server, with an
// in-memory SQLite database, listening on a free loopback port.
//
// It prints one JSON line on standard output once the server is ready,
//
//	{"address":"127.0.0.1:PORT","namespace":"temporaltest-N"}
//
// and runs until SIGTERM or SIGINT, until -max-lifetime, or, with
// -watch-stdin, until its standard input is closed (so that it does not
// outlive a test process that was killed).
//
// It is a module of its own because the server builds only with Temporal's
// sdk v1.50.0 and api v1.63.5, and not beside the OpenTelemetry versions of
// the main Runlet module. Build it without -race (see ../../ci.sh).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/server/temporaltest"
)

func main() {
	maxLifetime := flag.Duration("max-lifetime", 30*time.Minute, "exit after this long even if nobody asks")
	watchStdin := flag.Bool("watch-stdin", false, "exit when standard input is closed")
	flag.Parse()

	srv := temporaltest.NewServer()
	line, err := json.Marshal(map[string]string{
		"address":   srv.GetFrontendHostPort(),
		"namespace": srv.GetDefaultNamespace(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "devserver:", err)
		os.Exit(1)
	}
	fmt.Println(string(line))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	stdinClosed := make(chan struct{})
	if *watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(stdinClosed)
		}()
	}
	select {
	case <-sig:
	case <-stdinClosed:
	case <-time.After(*maxLifetime):
		fmt.Fprintln(os.Stderr, "devserver: maximum lifetime reached")
	}
	done := make(chan struct{})
	go func() {
		srv.Stop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}
