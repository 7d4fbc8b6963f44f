package vertextest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/vertex/vertextest"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/runlettest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServes: the adapters' Vertex requests, streamed or not, are served;
// a wrong token, project or location is refused as Vertex refuses it.
func TestServes(t *testing.T) {
	srv := vertextest.NewServer("p", "us-east5")
	defer srv.Close()
	srv.Gemini.SetReplyResponder(func(runlettest.WireRequest) runlettest.WireReply { return runlettest.WireReply{Text: "gemini"} })
	srv.Claude.SetReplyResponder(func(runlettest.WireRequest) runlettest.WireReply { return runlettest.WireReply{Text: "claude"} })
	tok := srv.TokenFunc()
	bad := func(context.Context) (string, error) { return "ya29.wrong", nil }
	models := map[string]func(project string, tok func(context.Context) (string, error)) runlet.Model{
		"gemini": func(p string, tok func(context.Context) (string, error)) runlet.Model {
			return gemini.New(gemini.Config{BaseURL: srv.URL, Model: "gemini-2.5-flash", Token: tok, MaxRetries: -1,
				Vertex: &gemini.Vertex{Project: p, Location: "us-east5"}})
		},
		"claude": func(p string, tok func(context.Context) (string, error)) runlet.Model {
			return anthropic.NewMessages(anthropic.Config{BaseURL: srv.URL, Model: "claude-sonnet-4-5@20250929", Token: tok, MaxRetries: -1,
				Vertex: &anthropic.Vertex{Project: p, Location: "us-east5"}})
		},
	}
	req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}
	for name, m := range models {
		out, err := m("p", tok).Generate(context.Background(), req)
		if err != nil || out.Message.Text() != name {
			t.Fatalf("%s: %v %v", name, out, err)
		}
		text := ""
		for ev, err := range m("p", tok).Stream(context.Background(), req) {
			if err != nil {
				t.Fatalf("%s stream: %v", name, err)
			}
			if ev.Kind == runlet.StreamDone {
				text = ev.Response.Message.Text()
			}
		}
		if text != name {
			t.Fatalf("%s stream: %q", name, text)
		}
		for _, c := range []struct {
			project string
			tok     func(context.Context) (string, error)
			status  int
		}{{"p", bad, http.StatusUnauthorized}, {"other", tok, http.StatusNotFound}} {
			_, err := m(c.project, c.tok).Generate(context.Background(), req)
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) || pe.StatusCode != c.status {
				t.Errorf("%s %+v: err = %v", name, c.project, err)
			}
		}
	}
}
