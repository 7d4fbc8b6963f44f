package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// An approval with edited arguments, across two opens of one database (two
// processes, in real life): the session stored in SQLite holds the
// arguments that ran, and the model's in OriginalArguments.
func TestEditedApprovalInTheSession(t *testing.T) {
	type pathIn struct {
		Path string `json:"path"`
	}
	var ran []string
	del := runlet.NewTool("delete_file", "Deletes a file.", func(_ context.Context, in pathIn) (string, error) {
		ran = append(ran, in.Path)
		return "deleted " + in.Path, nil
	}, runlet.WithApproval())
	agent := &runlet.Agent{Name: "janitor", Tools: []runlet.Tool{del}, Model: runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "delete_file", `{"path":"/tmp/a"}`)),
		runlettest.TextReply("Deleted."),
	)}
	file := filepath.Join(t.TempDir(), "runlet.db")
	ctx := context.Background()
	res, err := runlet.NewRuntime(runlet.WithStore(openAt(t, file))).Run(ctx, agent, "Delete /tmp/a.", runlet.WithSession("s"))
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("res %+v err %v", res, err)
	}
	store := openAt(t, file)
	if _, err := runlet.NewRuntime(runlet.WithStore(store)).Resume(ctx, agent, res.RunID,
		runlet.ApproveWithArguments("c1", json.RawMessage(`{"path":"/tmp/a.bak"}`))); err != nil {
		t.Fatal(err)
	}
	if len(ran) != 1 || ran[0] != "/tmp/a.bak" {
		t.Fatalf("ran %v", ran)
	}
	hist, err := store.LoadSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 4 {
		t.Fatalf("session holds %d messages", len(hist))
	}
	calls := hist[1].ToolCalls()
	if len(calls) != 1 || string(calls[0].Arguments) != `{"path":"/tmp/a.bak"}` || string(calls[0].OriginalArguments) != `{"path":"/tmp/a"}` {
		t.Fatalf("stored call %+v", calls)
	}
}
