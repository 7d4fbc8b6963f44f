package runlet_test

import (
	"context"
	"errors"
	"testing"

	"github.com/runlet/runlet"
)

func TestContextWithRunInfo(t *testing.T) {
	store := runlet.NewMemoryStore()
	ctx := runlet.ContextWithRunInfo(context.Background(), runlet.RunInfo{RunID: "r", SessionID: "s", Agent: "a", Turn: 3}, store)
	if ri, ok := runlet.RunInfoFrom(ctx); !ok || ri.RunID != "r" || ri.SessionID != "s" || ri.Agent != "a" || ri.Turn != 3 {
		t.Fatalf("RunInfoFrom = %+v, %v", ri, ok)
	}
	if err := runlet.SetState(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := store.GetState(context.Background(), "s", "k"); err != nil || string(v) != "v" {
		t.Fatalf("the store holds %q, %v", v, err)
	}
	if v, err := runlet.GetState(ctx, "k"); err != nil || string(v) != "v" {
		t.Fatalf("GetState = %q, %v", v, err)
	}
	if err := runlet.DeleteState(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := runlet.GetState(ctx, "k"); !errors.Is(err, runlet.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	// Without a session or a store there is no state.
	for _, ctx := range []context.Context{
		runlet.ContextWithRunInfo(context.Background(), runlet.RunInfo{RunID: "r"}, store),
		runlet.ContextWithRunInfo(context.Background(), runlet.RunInfo{RunID: "r", SessionID: "s"}, nil),
	} {
		if _, err := runlet.GetState(ctx, "k"); !errors.Is(err, runlet.ErrNoSession) {
			t.Fatalf("GetState = %v, want ErrNoSession", err)
		}
	}
}
