package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/sqlite"
)

func Example() {
	dir, err := os.MkdirTemp("", "runlet-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "runlet.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// A runtime keeps sessions, state and checkpoints in the file:
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
	// Output:
	// stale append conflicts: true
	// user: Hello
	// assistant: Hi! How can I help?
}

func ExampleStore_ClaimCheckpoint() {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	if err := store.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: "run-1", Turn: 2}); err != nil {
		log.Fatal(err)
	}
	cp, err := store.ClaimCheckpoint(ctx, "run-1") // the first resume gets it
	fmt.Println(cp.Turn, err)
	_, err = store.ClaimCheckpoint(ctx, "run-1") // a second resume does not
	fmt.Println(errors.Is(err, runlet.ErrNotFound))
	// Output:
	// 2 <nil>
	// true
}
