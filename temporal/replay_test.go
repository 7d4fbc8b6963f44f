package temporal

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.temporal.io/sdk/worker"
)

// The histories in testdata/histories were recorded from the integration
// tests against a real server (RUNLET_TEMPORAL_RECORD=1, see record). A
// change to the workflow that would make it decide differently on an old
// history — a break of determinism, which would strand runs in flight —
// fails here.

func replayer(t *testing.T, agents ...*runlet.Agent) worker.WorkflowReplayer {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	mustNew(t, Config{Agents: agents}).RegisterWorkflow(r)
	return r
}

// replayAgents stand for the recorded runs' agents: replay runs no
// activity, so only their names (and limits) matter.
func replayAgents() []*runlet.Agent {
	m := runlettest.NewModel()
	var agents []*runlet.Agent
	for _, name := range []string{"weather", "trip", "mailer", "loop", "long", "typed"} {
		agents = append(agents, &runlet.Agent{Name: name, Model: m})
	}
	return agents
}

func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("recorded histories: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			if err := replayer(t, replayAgents()...).ReplayWorkflowHistoryFromJSONFile(quietLogger(), f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestReplayDetectsAChangedWorkflow(t *testing.T) {
	// The recorded crash run made three model calls; a worker whose agent
	// now stops after one would fail the run where the history goes on.
	agents := replayAgents()
	agents[1].MaxTurns = 1
	err := replayer(t, agents...).ReplayWorkflowHistoryFromJSONFile(quietLogger(), "testdata/histories/crash.json")
	if err == nil {
		t.Fatal("replay of a history the workflow no longer matches succeeded")
	}
	t.Log(err)
}

// TestReplayWithInputGuardrails: runs recorded before the input's
// guardrails became an activity replay on a worker whose agents have
// input guardrails (workflow.GetVersion "runlet.input-guardrails").
func TestReplayWithInputGuardrails(t *testing.T) {
	files, _ := filepath.Glob("testdata/histories/*.json")
	agents := replayAgents()
	for _, a := range agents {
		a.Guardrails = []runlet.Guardrail{screen()}
	}
	for _, f := range files {
		if err := replayer(t, agents...).ReplayWorkflowHistoryFromJSONFile(quietLogger(), f); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
