package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// The human-in-the-loop path across processes: one process runs until a
// tool needs approval (the run checkpoints to Postgres), a second process —
// the test binary re-run — resumes it from the store alone. The result must
// equal that of the same scripted run without the interruption.

type deleteArgs struct {
	Path string `json:"path"`
}

// resumeAgent is the same agent in both processes; approval decides whether
// delete_file needs it.
func resumeAgent(approval bool) *runlet.Agent {
	var opts []runlet.ToolOption
	if approval {
		opts = append(opts, runlet.WithApproval())
	}
	del := runlet.NewTool("delete_file", "Deletes a file.", func(ctx context.Context, in deleteArgs) (string, error) {
		return "deleted " + in.Path, nil
	}, opts...)
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "delete_file", `{"path":"/tmp/a"}`)),
		runlettest.TextReply("Deleted /tmp/a."),
	)
	return &runlet.Agent{Name: "janitor", Model: model, Tools: []runlet.Tool{del}}
}

const resumeChildEnv = "RUNLET_TEST_RESUME_CHILD"

func TestResumeInSecondProcess(t *testing.T) {
	if os.Getenv(resumeChildEnv) != "" {
		resumeChild(t)
		return
	}
	schema := testSchema(t)
	store := open(t, schema)
	ctx := context.Background()

	want, err := runlet.NewRuntime().Run(ctx, resumeAgent(false), "Delete /tmp/a.")
	if err != nil {
		t.Fatal(err)
	}

	res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(ctx, resumeAgent(true), "Delete /tmp/a.", runlet.WithSession("s1"))
	if err != nil || res.Status != runlet.StateInterrupted || len(res.Pending) != 1 {
		t.Fatalf("first process: res=%+v err=%v", res, err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeInSecondProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), resumeChildEnv+"=1", "RUNLET_TEST_SCHEMA="+schema, "RUNLET_TEST_RUN_ID="+res.RunID)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("second process: %v\n%s", err, out)
	}
	var got runlet.Result
	if err := json.Unmarshal(lastLine(out), &got); err != nil {
		t.Fatalf("second process output: %v\n%s", err, out)
	}
	if got.Status != runlet.StateFinished || got.Output != want.Output || got.Turns != want.Turns || got.Usage != want.Usage {
		t.Fatalf("resumed %+v\nwant %+v", got, *want)
	}
	a, _ := json.Marshal(got.Messages)
	b, _ := json.Marshal(want.Messages)
	if string(a) != string(b) {
		t.Fatalf("messages differ:\n%s\n%s", a, b)
	}
	// The session holds the whole run; the checkpoint is gone.
	hist, err := store.LoadSession(ctx, "s1")
	if err != nil || len(hist) != len(want.Messages) {
		t.Fatalf("session: %d messages, %v", len(hist), err)
	}
	if _, err := runlet.NewRuntime(runlet.WithStore(store)).Resume(ctx, resumeAgent(true), res.RunID, runlet.Approve("c1")); err == nil {
		t.Fatal("second resume succeeded")
	}
}

// resumeChild is the second process: it knows only the run ID and the store.
func resumeChild(t *testing.T) {
	store := open(t, os.Getenv("RUNLET_TEST_SCHEMA"))
	agent := resumeAgent(true)
	// This process's scripted model starts where the first one stopped.
	agent.Model = runlettest.NewModel(runlettest.TextReply("Deleted /tmp/a."))
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Resume(context.Background(), agent, os.Getenv("RUNLET_TEST_RUN_ID"), runlet.Approve("c1"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	os.Stdout.Write(append(append([]byte("\n"), b...), '\n'))
}

// lastLine returns the last line of out that holds a JSON object (the
// child's result; go test prints PASS after it).
func lastLine(out []byte) []byte {
	lines := bytes.Split(out, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if len(lines[i]) > 0 && lines[i][0] == '{' {
			return lines[i]
		}
	}
	return nil
}
