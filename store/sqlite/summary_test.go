package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/store/sqlite"
)

// summaryProcess plays one process: it opens the database file, runs one
// turn of session "s" with a fresh Summarizer (Keep 1, Batch 1) and returns
// how often the summariser model was called and the first message the
// agent's model saw.
func summaryProcess(t *testing.T, path, prompt string) (calls int, first string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	summaries := runlettest.NewModel()
	summaries.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		return runlettest.TextReply(fmt.Sprintf("summary of %d bytes", len(req.Messages[0].Text())))
	}
	rt := runlet.NewRuntime(runlet.WithStore(st), runlet.WithPreparers(runlet.Summarizer(runlet.SummarizerConfig{Model: summaries, Keep: 1, Batch: 1})))
	agentModel := runlettest.NewModel()
	agentModel.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		if len(agentModel.Requests()) == 1 {
			return runlettest.ToolCallReply(runlettest.Call("c1", "echo", `{"s": "x"}`))
		}
		return runlettest.TextReply("ok")
	}
	echo := runlet.NewTool("echo", "Echoes s.", func(ctx context.Context, in struct{ S string }) (string, error) { return in.S, nil })
	if _, err := rt.Run(ctx, &runlet.Agent{Model: agentModel, Tools: []runlet.Tool{echo}}, prompt, runlet.WithSession("s")); err != nil {
		t.Fatal(err)
	}
	return len(summaries.Requests()), agentModel.Requests()[0].Messages[0].Text()
}

// A Summarizer's summary outlives the process: a second process over the
// same file reuses it without calling the summariser, even though the
// history it hashes has been through the database (tool calls included).
func TestSummaryOutlivesProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runlet.db")
	// Turns 1 and 2 need no summary; turn 3 (over Keep+Batch) summarises
	// turns 1 and 2.
	var want []int
	var firsts []string
	for i := range 4 {
		calls, first := summaryProcess(t, path, fmt.Sprint("turn ", i))
		want = append(want, calls)
		firsts = append(firsts, first)
	}
	// Turn 4, in a new process, has 2 turns after the summary (within
	// Keep+Batch): it reuses the stored one.
	if fmt.Sprint(want) != "[0 0 1 0]" || !strings.HasPrefix(firsts[2], "Summary of the earlier conversation:") || firsts[3] != firsts[2] {
		t.Fatalf("summariser calls per process %v, first messages %q", want, firsts)
	}
}
