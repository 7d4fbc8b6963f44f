package redis_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/redis"
)

// Open a Store from a URL, such as redis://:password@cache.internal:6379/0.
// Several instances of an application can open the same Redis: they share
// sessions, state and checkpoints. (TestExample runs this example when a
// Redis server is reachable.)
func Example() {
	ctx := context.Background()
	store, err := redis.Open(ctx, os.Getenv("REDIS_URL"),
		redis.WithPrefix("myapp:runlet:"),       // apart from the application's own keys
		redis.WithSessionTTL(30*24*time.Hour),   // idle sessions go after 30 days
		redis.WithCheckpointTTL(7*24*time.Hour)) // unresumed runs after a week
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// A runtime keeps sessions, state and checkpoints in Redis:
	//	rt := runlet.NewRuntime(runlet.WithStore(store))

	// Appends are checked against the session's length, so two writers
	// cannot interleave half turns.
	turn := []runlet.Message{runlet.UserText("Hello"), runlet.AssistantText("Hi! How can I help?")}
	if err := store.AppendSession(ctx, "user-42", 0, turn); err != nil {
		log.Fatal(err)
	}
	err = store.AppendSession(ctx, "user-42", 0, turn) // stale: the session has 2 messages now
	fmt.Println("stale append conflicts:", errors.Is(err, runlet.ErrConflict))

	msgs, err := store.LoadSession(ctx, "user-42")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
}

// TestExample runs Example against the test server, when one is reachable,
// and checks what it prints.
func TestExample(t *testing.T) {
	url := redis.TestURL(t)
	t.Setenv("REDIS_URL", url)
	const prefix = "myapp:runlet:"
	redis.DeleteKeys(t, url, prefix)
	t.Cleanup(func() { redis.DeleteKeys(t, url, prefix) })

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	func() {
		defer func() { os.Stdout = stdout }()
		Example()
	}()
	w.Close()
	got := <-out
	want := "stale append conflicts: true\nuser: Hello\nassistant: Hi! How can I help?\n"
	if got != want {
		t.Fatalf("Example printed\n%s\nwant\n%s", got, want)
	}
}
