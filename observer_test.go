package runlet_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func TestSlogObserver(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "nope", `{}`)),
		runlettest.TextReply("done"),
	)
	rt := runlet.NewRuntime(runlet.WithObserver(runlet.NewSlogObserver(logger)))
	if _, err := rt.Run(context.Background(), &runlet.Agent{Name: "a", Model: model}, "go"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`"msg":"model.started"`, `"msg":"tool.finished"`, `"level":"WARN"`, `"error_kind":"unknown_tool"`, `"msg":"run.finished"`, `"agent":"a"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "text.delta") || strings.Contains(out, "state.changed") {
		t.Errorf("debug events logged at info level:\n%s", out)
	}
	// Failures log at error level with the policy.
	buf.Reset()
	model = runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "nope", `{}`)))
	_, err := runlet.NewRuntime(runlet.WithObserver(runlet.NewSlogObserver(logger)), runlet.WithMaxTurns(1)).Run(context.Background(), &runlet.Agent{Model: model}, "go")
	if err == nil || !strings.Contains(buf.String(), `"level":"ERROR","msg":"run.failed"`) || !strings.Contains(buf.String(), `"policy":"max_turns"`) {
		t.Fatalf("err=%v log=%s", err, buf.String())
	}
}
