package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/storetest"
)

func TestMain(m *testing.M) {
	if crashHelper() {
		return
	}
	goleak.VerifyTestMain(m)
}

const defaultAddr = "127.0.0.1:6379"

var (
	reachOnce sync.Once
	reachURL  string
	reachErr  error
)

// testURL returns the server's URL from $RUNLET_REDIS_URL or, when that is
// unset, redis://127.0.0.1:6379/0. It skips the test when that variable is
// unset and nothing answers at the default address; it fails it when the
// server named by the variable does not answer, or when no server does
// under CI, so that CI cannot pass by skipping.
func testURL(t testing.TB) string {
	t.Helper()
	reachOnce.Do(func() {
		reachURL = os.Getenv("RUNLET_REDIS_URL")
		set := reachURL != ""
		if !set {
			reachURL = "redis://" + defaultAddr + "/0"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		o, err := goredis.ParseURL(reachURL)
		if err != nil {
			reachErr = err
			return
		}
		c := goredis.NewClient(o)
		defer c.Close()
		reachErr = c.Ping(ctx).Err()
		if reachErr != nil && set {
			reachErr = &setButUnreachable{reachErr}
		}
	})
	if reachErr != nil {
		if _, set := reachErr.(*setButUnreachable); set || os.Getenv("CI") != "" {
			t.Fatalf("no Redis server answers at $RUNLET_REDIS_URL (or %s): %v", defaultAddr, reachErr)
		}
		t.Skipf("no Redis server reachable: RUNLET_REDIS_URL is unset and nothing answers at %s (%v); run .ci/redis.sh as root, or redis-server --port 6379 --bind 127.0.0.1", defaultAddr, reachErr)
	}
	return reachURL
}

type setButUnreachable struct{ error }

// testPrefix returns a key prefix unique to this test; its keys are deleted
// at the end of the test.
func testPrefix(t testing.TB) string {
	t.Helper()
	url := testURL(t)
	var b [6]byte
	rand.Read(b[:])
	prefix := "runlet-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() { deleteKeys(t, url, prefix) })
	return prefix
}

// deleteKeys deletes every key that starts with prefix (which holds no glob
// characters).
func deleteKeys(t testing.TB, url, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := goredis.ParseURL(url)
	if err != nil {
		t.Error(err)
		return
	}
	c := goredis.NewClient(o)
	defer c.Close()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := c.Del(ctx, iter.Val()).Err(); err != nil {
			t.Errorf("deleting %s: %v", iter.Val(), err)
			return
		}
	}
	if err := iter.Err(); err != nil {
		t.Errorf("deleting keys %s*: %v", prefix, err)
	}
}

// open opens a Store with the given prefix, closed at the end of the test.
func open(t testing.TB, prefix string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), testURL(t), append([]Option{WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	s := open(t, testPrefix(t))
	storetest.Run(t, func(t *testing.T) runlet.Store { return s })
}

// TestContractTwoInstances runs the suite over two Stores with clients of
// their own, as two application instances sharing the server.
func TestContractTwoInstances(t *testing.T) {
	prefix := testPrefix(t)
	a, b := open(t, prefix), open(t, prefix)
	storetest.Run(t, func(t *testing.T) runlet.Store { return storetest.Alternate(a, b) })
}

// TestContractWithTTLs runs the suite with expiry on, which takes the
// scripts' PEXPIRE paths.
func TestContractWithTTLs(t *testing.T) {
	s := open(t, testPrefix(t), WithSessionTTL(time.Hour), WithCheckpointTTL(time.Hour))
	storetest.Run(t, func(t *testing.T) runlet.Store { return s })
}

func TestNewKeepsCallersClient(t *testing.T) {
	ctx := t.Context()
	o, err := goredis.ParseURL(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	client := goredis.NewClient(o)
	defer client.Close()
	s, err := New(client, WithPrefix(testPrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Client() != client {
		t.Fatal("Client() is not the client given to New")
	}
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("Close closed the caller's client: %v", err)
	}
	if _, err := New(nil); err == nil {
		t.Fatal("New(nil client) succeeded")
	}
	for _, o := range []Option{WithSessionTTL(-time.Second), WithCheckpointTTL(time.Microsecond)} {
		if _, err := New(client, o); err == nil {
			t.Fatal("New accepted a negative or sub-millisecond TTL")
		}
	}
}

// TestOpenErrorsHideURL checks that a password in the URL reaches no error.
func TestOpenErrorsHideURL(t *testing.T) {
	// A port nothing listens on: bind one and close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, url := range []string{
		"redis://user:s3cr3t-pw@" + addr + "/0",
		"redis://user:s3cr3t-pw@" + addr + "/notanumber",
		"redis://user:s3cr3t-pw@[::1/0",
		"http://user:s3cr3t-pw@" + addr,
	} {
		s, err := Open(ctx, url)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%q) succeeded", url)
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("Open error shows the password: %v", err)
		}
	}
}
