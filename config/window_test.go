package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/runlettest"
)

// context.max_messages windows the history by message count, in whole
// turns (runlet.KeepLastMessages).
func TestContextMaxMessages(t *testing.T) {
	l := &config.Loader{}
	f, err := l.Decode("window.yaml", []byte("model: {provider: openai, name: m, api_key: k}\ncontext:\n  max_messages: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Context.MaxMessages != 3 {
		t.Fatalf("context = %+v", f.Context)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	model := runlettest.NewModel(runlettest.TextReply("ok"))
	setup.Agent.Model = model
	var history []runlet.Message
	for i := range 4 {
		history = append(history, runlet.UserText(fmt.Sprint("q", i)), runlet.AssistantText(fmt.Sprint("a", i)))
	}
	if _, err := setup.NewRuntime().Run(t.Context(), setup.Agent, "now", runlet.WithHistory(history...)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range model.Requests()[0].Messages {
		got = append(got, m.Text())
	}
	if strings.Join(got, " ") != "q3 a3 now" {
		t.Errorf("the model saw %q, want the last two turns (3 messages)", got)
	}
}

func TestContextMaxMessagesErrors(t *testing.T) {
	const model = "model: {provider: openai, name: m}\n"
	for _, tc := range []struct{ yaml, want string }{
		{"context:\n  max_messages: -1\n", "w.yaml:3:17: context.max_messages: must not be negative, got -1"},
		{"context:\n  max_messages: ten\n", `w.yaml:3:17: context.max_messages: want an integer, got "ten"`},
		{"context:\n  max_message: 10\n", `w.yaml:3:3: context.max_message: unknown field; did you mean "max_messages"?`},
	} {
		_, err := (&config.Loader{}).Decode("w.yaml", []byte(model+tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v\nwant %s", tc.yaml, err, tc.want)
		}
	}
}
