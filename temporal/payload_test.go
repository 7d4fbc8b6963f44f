package temporal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
)

type (
	activityInfo  = activity.Info
	encodedValues = converter.EncodedValues
	encodedValue  = converter.EncodedValue
)

func TestPayloadsKeepLargeResultsOutOfTheHistory(t *testing.T) {
	const turns, size = 4, 8 << 10
	payloads := NewMemoryPayloadStore()
	store := runlet.NewMemoryStore()
	ctx := context.Background()
	prior := []runlet.Message{runlet.UserText("earlier"), runlet.AssistantText("noted")}
	if err := store.AppendSession(ctx, "s", 0, prior); err != nil {
		t.Fatal(err)
	}
	agent := longAgent(turns, size)
	d := mustNew(t, Config{Agents: []*runlet.Agent{agent}, Sessions: store, Payloads: payloads})
	e := env(t, d)
	var inputs []ModelInput
	e.SetOnActivityStartedListener(func(info *activityInfo, _ context.Context, args encodedValues) {
		if info.ActivityType.Name == ModelActivityName {
			var in ModelInput
			if err := args.Get(&in); err != nil {
				t.Error(err)
			}
			inputs = append(inputs, in)
		}
	})
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "long", Input: "go", SessionID: "s", MaxTurns: turns + 1})
	var wr workflowResult
	if err := e.GetWorkflowResult(&wr); err != nil {
		t.Fatal(err)
	}
	if want := "read 4 pages"; wr.Output != want {
		t.Fatalf("output %q, want %q: the model did not see the results in full", wr.Output, want)
	}
	// The first call carries the session by reference; each later one the
	// assistant's message and the stand-in of the turn's result.
	if len(inputs) != turns+1 {
		t.Fatalf("%d model calls", len(inputs))
	}
	for i, in := range inputs {
		want := 2
		if i == 0 {
			want = 1 // the input; the session is the base
		}
		if in.Base == nil || len(in.Messages) != want || jsonSize(in) > 2<<10 {
			t.Fatalf("model input %d: base %v, %d messages, %d bytes", i, in.Base, len(in.Messages), jsonSize(in))
		}
	}
	// The Result holds stand-ins and refs; reading them back gives the pages.
	if len(wr.Refs) != turns {
		t.Fatalf("%d refs, want %d", len(wr.Refs), turns)
	}
	standIn := toolResults(wr.Messages[wr.Refs[0].Msg])[0].Content
	if !strings.HasPrefix(standIn, "[kept in the payload store: sha256/") {
		t.Fatalf("stand-in %q", standIn)
	}
	res, err := readBack(ctx, payloads, &wr.Result, wr.Refs)
	if err != nil {
		t.Fatal(err)
	}
	hist, _ := store.LoadSession(ctx, "s")
	if jsonString(hist[2:]) != jsonString(res.Messages) || !strings.HasPrefix(toolResults(res.Messages[2])[0].Content, "page 0:") {
		t.Fatalf("session and result differ, or the result was not read back")
	}
}

func TestPayloadMismatchIsATypedError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(s *MemoryPayloadStore)
		cfg   func(c *Config)
	}{
		{"changed content", func(s *MemoryPayloadStore) {
			for k, v := range s.data {
				if strings.Contains(string(v), "page ") {
					s.data[k] = []byte(strings.Replace(string(v), "page ", "PAGE ", 1))
				}
			}
		}, nil},
		{"lost content", func(s *MemoryPayloadStore) {
			for k, v := range s.data {
				if strings.Contains(string(v), "page ") {
					delete(s.data, k)
				}
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payloads := NewMemoryPayloadStore()
			d := mustNew(t, Config{Agents: []*runlet.Agent{longAgent(2, 4<<10)}, Payloads: payloads})
			e := env(t, d)
			// After the first tool call, the store goes wrong.
			e.SetOnActivityCompletedListener(func(info *activityInfo, _ encodedValue, _ error) {
				if info.ActivityType.Name == ToolActivityName {
					payloads.mu.Lock()
					tc.spoil(payloads)
					payloads.mu.Unlock()
				}
			})
			e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "long", Input: "go", MaxTurns: 3})
			app, fd := failure(t, e.GetWorkflowError())
			if app.Type() != ErrTypePayload || !app.NonRetryable() || fd.Result == nil {
				t.Fatalf("error %v (type %s), want a %s with the partial result", app, app.Type(), ErrTypePayload)
			}
		})
	}
}

func TestRefsWithoutAStoreFail(t *testing.T) {
	d := mustNew(t, Config{Agents: []*runlet.Agent{longAgent(1, 10)}})
	_, _, err := d.transcript(context.Background(), ModelInput{Base: &Ref{SHA256: "00", Size: 1}})
	if err == nil || !strings.Contains(err.Error(), "no payload store") {
		t.Fatalf("err = %v", err)
	}
}

func jsonSize(v any) int { return len(jsonString(v)) }

func TestDirPayloadStore(t *testing.T) {
	ctx := context.Background()
	s, err := NewDirPayloadStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := putPayload(ctx, s, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := getPayload(ctx, s, ref); err != nil || string(b) != "hello" {
		t.Fatalf("got %q, %v", b, err)
	}
	if _, err := putPayload(ctx, s, []byte("hello")); err != nil {
		t.Fatalf("a second put of the same content: %v", err)
	}
	if _, err := s.GetPayload(ctx, "sha256/"+strings.Repeat("0", 64)); !errors.Is(err, runlet.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	for _, key := range []string{"../x", "sha256/../../etc/passwd", "sha256/" + strings.Repeat("g", 64), "sha256/00", ""} {
		if err := s.PutPayload(ctx, key, []byte("x")); err == nil {
			t.Errorf("PutPayload(%q) accepted a key that is no content address", key)
		}
		if _, err := s.GetPayload(ctx, key); err == nil || errors.Is(err, runlet.ErrNotFound) {
			t.Errorf("GetPayload(%q) = %v, want a refused key", key, err)
		}
	}
}
