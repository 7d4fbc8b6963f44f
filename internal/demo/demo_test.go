package demo_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/demo"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// A second question to the recording (the examples' and the CLI's path:
// the real adapter over demo.Client) fails at once with an error that says
// what the recording is and how to go live, not as a connection failure
// of api.openai.com.
func TestRecordingEndSaysWhatItIs(t *testing.T) {
	model := openai.NewChatCompletions(openai.Config{Model: "gpt-4o-mini", APIKey: "sk-offline", HTTPClient: demo.Client()})
	agent := &runlet.Agent{Name: "demo", Model: model, Tools: []runlet.Tool{runlet.NewTool("get_capital", "capital",
		func(_ context.Context, in struct {
			Country string `json:"country"`
		}) (string, error) {
			return "London", nil
		})}}
	rt := runlet.NewRuntime()
	// The recording is streamed: run as the CLI and the examples do.
	stream := func(input string) (out string, err error) {
		for ev, e := range rt.Stream(t.Context(), agent, input) {
			if f, ok := ev.(*runlet.RunFinished); ok {
				out = f.Result.Output
			}
			if e != nil {
				err = e
			}
		}
		return out, err
	}
	if out, err := stream(demo.Question); err != nil || out != "The capital of the UK is London." {
		t.Fatalf("first run: %v %q", err, out)
	}
	_, err := stream("And France?")
	var end *demo.EndError
	if !errors.As(err, &end) || !errors.Is(err, demo.ErrEnd) || !errors.Is(err, runlettest.ErrCassetteEnd) || end.Request != 3 {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"offline replay", "answers one recorded question", demo.Question, "to go live, set OPENAI_API_KEY"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	for _, bad := range []string{"connection failed", "api.openai.com"} {
		if strings.Contains(msg, bad) {
			t.Errorf("error %q says %q", msg, bad)
		}
	}
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.Retryable {
		t.Errorf("err = %#v: want a final *runlet.ProviderError", err)
	}
}
