package runlet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// An approval with edited arguments: what ran is what the history says.

const (
	proposed = `{"path":"/tmp/a"}`
	edited   = `{"path":"/tmp/a.bak"}`
)

// ran lists the deleted paths in order (the tools of a turn run
// concurrently).
func ran(deleted []string) string {
	return strings.Join(slices.Sorted(slices.Values(deleted)), ",")
}

// callOf returns the call with id among msgs' parts, failing if none.
func callOf(t *testing.T, where string, msgs []runlet.Message, id string) runlet.ToolCallPart {
	t.Helper()
	for _, m := range msgs {
		for _, c := range m.ToolCalls() {
			if c.ID == id {
				return c
			}
		}
	}
	t.Fatalf("%s: no call %q", where, id)
	return runlet.ToolCallPart{}
}

// wantEdited checks that c shows the edited arguments and keeps the model's.
func wantEdited(t *testing.T, where string, c runlet.ToolCallPart) {
	t.Helper()
	if string(c.Arguments) != edited || string(c.OriginalArguments) != proposed {
		t.Errorf("%s: call %s has arguments %s, original %s; want %s, original %s", where, c.ID, c.Arguments, c.OriginalArguments, edited, proposed)
	}
}

func TestEditedApprovalIsTheHistory(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "run", true: "stream"}[streaming], func(t *testing.T) {
			store := runlet.NewMemoryStore()
			var deleted []string
			var mu sync.Mutex
			model := runlettest.NewModel(script()...)
			agent := approvalAgent(model, &deleted, &mu)
			res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(context.Background(), agent, "clean up", runlet.WithSession("s"))
			if err != nil || res.Status != runlet.StateInterrupted {
				t.Fatalf("res %+v err %v", res, err)
			}

			var jsonl, logs bytes.Buffer
			rec := &recorder{}
			rt := runlet.NewRuntime(runlet.WithStore(store), runlet.WithObservers(rec, runlet.NewJSONLObserver(&jsonl),
				runlet.NewSlogObserver(slog.New(slog.NewTextHandler(&logs, nil)))))
			args := []byte(edited)
			d1 := runlet.ApproveWithArguments("d1", args)
			copy(args, `{"path":"/etc/pwd"}`) // the caller's buffer, reused: the decision keeps its copy
			decisions := []runlet.Decision{d1, runlet.Approve("d2")}
			var got *runlet.Result
			if streaming {
				evs, err := collect(t, rt.ResumeStream(context.Background(), agent, res.RunID, decisions...))
				if err != nil {
					t.Fatal(err)
				}
				got = evs[len(evs)-1].(*runlet.RunFinished).Result
			} else if got, err = rt.Resume(context.Background(), agent, res.RunID, decisions...); err != nil {
				t.Fatal(err)
			}
			if ran(deleted) != "/tmp/a.bak,/tmp/b" {
				t.Fatalf("deleted %v", deleted)
			}
			wantEdited(t, "Result.Messages", callOf(t, "Result.Messages", got.Messages, "d1"))
			hist, _ := store.LoadSession(context.Background(), "s")
			wantEdited(t, "session", callOf(t, "session", hist, "d1"))
			next := model.Requests()[1].Messages
			wantEdited(t, "next request", callOf(t, "next request", next, "d1"))
			// A call approved as it was is not an edit.
			for _, where := range [][]runlet.Message{got.Messages, hist, next} {
				if c := callOf(t, "d2", where, "d2"); c.OriginalArguments != nil || string(c.Arguments) != `{"path":"/tmp/b"}` {
					t.Errorf("d2 = %+v", c)
				}
			}

			// The edit is visible to an audit: the events, the JSONL and slog
			// observers.
			var started, finished bool
			for _, ev := range rec.evs {
				switch e := ev.(type) {
				case *runlet.ToolStarted:
					if e.Call.ID == "d1" {
						started = true
						wantEdited(t, "ToolStarted", e.Call)
					}
				case *runlet.ToolFinished:
					if e.Call.ID == "d1" {
						finished = true
						wantEdited(t, "ToolFinished", e.Call)
					}
				}
			}
			if !started || !finished {
				t.Fatalf("tool events started %v finished %v", started, finished)
			}
			var audited bool
			for line := range strings.SplitSeq(jsonl.String(), "\n") {
				if strings.Contains(line, `"tool.started"`) && strings.Contains(line, `"d1"`) {
					audited = strings.Contains(line, `"arguments":`+edited) && strings.Contains(line, `"original_arguments":`+proposed)
				}
			}
			if !audited {
				t.Errorf("JSONL tool.started of d1 does not show the edit:\n%s", jsonl.String())
			}
			if !strings.Contains(logs.String(), "call_id=d1 edited_arguments=true") || strings.Contains(logs.String(), "call_id=d2 edited_arguments") {
				t.Errorf("slog does not mark (only) the edited call:\n%s", logs.String())
			}
		})
	}
}

// A run interrupted again after an edited approval keeps the edit in its
// checkpoint, and the run resumed from that checkpoint sends it on.
func TestEditedApprovalInALaterCheckpoint(t *testing.T) {
	store := runlet.NewMemoryStore()
	var deleted []string
	var mu sync.Mutex
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("d1", "delete_file", proposed)),
		runlettest.ToolCallReply(runlettest.Call("d2", "delete_file", `{"path":"/tmp/b"}`)),
		runlettest.TextReply("Done."),
	)
	agent := approvalAgent(model, &deleted, &mu)
	rt := runlet.NewRuntime(runlet.WithStore(store))
	ctx := context.Background()
	if _, err := rt.Run(ctx, agent, "clean", runlet.WithRunID("r")); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Resume(ctx, agent, "r", runlet.ApproveWithArguments("d1", json.RawMessage(edited)))
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("res %+v err %v", res, err)
	}
	cp, err := store.LoadCheckpoint(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantEdited(t, "checkpoint", callOf(t, "checkpoint", cp.Messages, "d1"))
	if res, err = rt.Resume(ctx, agent, "r", runlet.Approve("d2")); err != nil || res.Output != "Done." {
		t.Fatalf("res %+v err %v", res, err)
	}
	wantEdited(t, "last request", callOf(t, "last request", model.Requests()[2].Messages, "d1"))
	wantEdited(t, "Result.Messages", callOf(t, "Result.Messages", res.Messages, "d1"))
}

// An agent called as a tool: the edit reaches its own history, its next
// request and its checkpoint inside its caller's.
func TestEditedApprovalNested(t *testing.T) {
	store := runlet.NewMemoryStore()
	var deleted []string
	var mu sync.Mutex
	inner := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("d1", "delete_file", proposed)),
		runlettest.ToolCallReply(runlettest.Call("d2", "delete_file", `{"path":"/tmp/b"}`)),
		runlettest.TextReply("Cleaned."),
	)
	ops := approvalAgent(inner, &deleted, &mu)
	boss := &runlet.Agent{Name: "boss", Model: runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "ops", `{"input":"clean up"}`)),
		runlettest.TextReply("All clean."),
	), Tools: []runlet.Tool{ops.AsTool()}}
	rec := &recorder{}
	rt := runlet.NewRuntime(runlet.WithStore(store), runlet.WithObservers(rec))
	ctx := context.Background()
	if _, err := rt.Run(ctx, boss, "tidy", runlet.WithRunID("r")); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Resume(ctx, boss, "r", runlet.ApproveWithArguments("d1", json.RawMessage(edited)))
	if err != nil || res.Status != runlet.StateInterrupted || len(res.Pending) != 1 || res.Pending[0].ID != "d2" {
		t.Fatalf("res %+v err %v", res, err)
	}
	cp, err := store.LoadCheckpoint(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantEdited(t, "nested checkpoint", callOf(t, "nested checkpoint", cp.Nested["c1"].Messages, "d1"))
	wantEdited(t, "inner's next request", callOf(t, "inner's next request", inner.Requests()[1].Messages, "d1"))
	var seen bool
	for _, ev := range rec.evs {
		if e, ok := ev.(*runlet.ToolStarted); ok && e.Call.ID == "d1" && e.Depth == 1 {
			seen = true
			wantEdited(t, "nested ToolStarted", e.Call)
		}
	}
	if !seen {
		t.Fatal("no ToolStarted for d1")
	}
	if res, err = rt.Resume(ctx, boss, "r", runlet.Approve("d2")); err != nil || res.Output != "All clean." {
		t.Fatalf("res %+v err %v", res, err)
	}
	wantEdited(t, "inner's last request", callOf(t, "inner's last request", inner.Requests()[2].Messages, "d1"))
	if ran(deleted) != "/tmp/a.bak,/tmp/b" {
		t.Fatalf("deleted %v", deleted)
	}
}

// Edited arguments that are not a JSON object, or that the tool's schema
// rejects, are the person's mistake: Resume refuses them with a
// *DecisionError, runs nothing and keeps the checkpoint, so the person can
// correct them and resume.
func TestEditedArgumentsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string
	}{
		{"invalid JSON", `{bad`, "not a JSON object"},
		{"not an object", `["/tmp/a"]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"schema", `{"path":42}`, `input schema of tool "delete_file" rejects`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, nested := range []bool{false, true} {
				store := runlet.NewMemoryStore()
				var deleted []string
				var mu sync.Mutex
				agent := approvalAgent(runlettest.NewModel(script()...), &deleted, &mu)
				if nested {
					agent = &runlet.Agent{Name: "boss", Model: runlettest.NewModel(
						runlettest.ToolCallReply(runlettest.Call("c1", "ops", `{"input":"clean up"}`)),
						runlettest.TextReply("All clean."),
					), Tools: []runlet.Tool{agent.AsTool()}}
				}
				rt := runlet.NewRuntime(runlet.WithStore(store))
				ctx := context.Background()
				if _, err := rt.Run(ctx, agent, "clean", runlet.WithRunID("r")); err != nil {
					t.Fatal(err)
				}
				_, err := rt.Resume(ctx, agent, "r", runlet.ApproveWithArguments("d1", json.RawMessage(tc.args)), runlet.Approve("d2"))
				var de *runlet.DecisionError
				if !errors.As(err, &de) || !errors.Is(err, runlet.ErrInvalidDecision) || de.CallID != "d1" || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("nested %v: err %v, want a *DecisionError for d1 saying %q", nested, err, tc.want)
				}
				if tc.name == "schema" {
					var te *runlet.ToolError
					if !errors.As(err, &te) || te.Kind != runlet.ToolInvalidArgs {
						t.Errorf("schema error %v is not a *ToolError of kind %s", err, runlet.ToolInvalidArgs)
					}
				}
				if len(deleted) != 0 {
					t.Fatalf("ran %v", deleted)
				}
				// The checkpoint is still there: corrected, the resume runs.
				res, err := rt.Resume(ctx, agent, "r", runlet.ApproveWithArguments("d1", json.RawMessage(edited)), runlet.Approve("d2"))
				if err != nil || res.Status != runlet.StateFinished {
					t.Fatalf("nested %v: corrected resume: res %+v err %v", nested, res, err)
				}
				if ran(deleted) != "/tmp/a.bak,/tmp/b" {
					t.Fatalf("deleted %v", deleted)
				}
			}
		})
	}
}

// A call's original arguments round-trip through JSON, also when they
// were not valid JSON (a person fixed a cut-off call).
func TestEditedCallJSONRoundTrip(t *testing.T) {
	for _, c := range []runlet.ToolCallPart{
		{ID: "a", Name: "f", Arguments: json.RawMessage(edited), OriginalArguments: json.RawMessage(proposed)},
		{ID: "b", Name: "f", Arguments: json.RawMessage(edited), OriginalArguments: json.RawMessage(`{"path":"/tm`)},
		{ID: "c", Name: "f", Arguments: json.RawMessage(`{"pa`), OriginalArguments: json.RawMessage(proposed)},
		{ID: "d", Name: "f", Arguments: json.RawMessage(edited)},
	} {
		msg := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{c}}
		b, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		var back runlet.Message
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got := back.Parts[0].(runlet.ToolCallPart)
		if string(got.Arguments) != string(c.Arguments) || string(got.OriginalArguments) != string(c.OriginalArguments) {
			t.Errorf("%s: round trip of %+v gave %+v (%s)", c.ID, c, got, b)
		}
		var alone runlet.ToolCallPart
		if b, err = json.Marshal(c); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &alone); err != nil || string(alone.OriginalArguments) != string(c.OriginalArguments) {
			t.Errorf("%s: alone: %+v, %v (%s)", c.ID, alone, err, b)
		}
	}
}
