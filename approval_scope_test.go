package runlet_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// An approval is for the call a human saw, in the turn that waited for it:
// a later turn whose call reuses the approved call's ID (a model or a
// provider chooses IDs) waits for approval again instead of running.
func TestApprovalDoesNotCarryToALaterCallWithTheSameID(t *testing.T) {
	var deleted []string
	var mu sync.Mutex
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("d1", "delete_file", `{"path":"/tmp/a"}`)),
		runlettest.ToolCallReply(runlettest.Call("d1", "delete_file", `{"path":"/home"}`)),
		runlettest.TextReply("Done."),
	)
	agent := approvalAgent(model, &deleted, &mu)
	rt := runlet.NewRuntime()
	res, err := rt.Run(context.Background(), agent, "clean up")
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	res, err = rt.Resume(context.Background(), agent, res.RunID, runlet.Approve("d1"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(deleted, ",") != "/tmp/a" {
		t.Fatalf("deleted %v, want only the approved /tmp/a", deleted)
	}
	if res.Status != runlet.StateInterrupted || len(res.Pending) != 1 || !strings.Contains(string(res.Pending[0].Arguments), "/home") {
		t.Fatalf("the second call with the approved ID did not wait for approval: %+v", res)
	}
}
