package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOffline(t *testing.T) { check(t, nil) }

// TestOverTheWire runs the three agents on the OpenAI adapter against the
// fake Chat Completions server, streamed: each request is answered by the
// agent its system instructions name.
func TestOverTheWire(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer()
	defer srv.Close()
	srv.SetReplyResponder(func(req runlettest.WireRequest) runlettest.WireReply {
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil || len(body.Messages) == 0 {
			return runlettest.WireReply{Text: "bad request"}
		}
		system := fmt.Sprint(body.Messages[0].Content)
		last := body.Messages[len(body.Messages)-1]
		result := fmt.Sprint(last.Content)
		call := func(name, args string) runlettest.WireReply {
			return runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: name, Arguments: args}}}
		}
		text := func(s string) runlettest.WireReply {
			return runlettest.WireReply{Text: s}
		}
		switch {
		case strings.HasPrefix(system, "Hand the user"):
			return call("transfer_to_travel", `{}`)
		case strings.HasPrefix(system, "You give travel advice") && (last.Role != "tool" || strings.HasPrefix(result, "Transferred")):
			return call("researcher", `{"input":"Weather forecast for Lisbon next week?"}`)
		case strings.HasPrefix(system, "You give travel advice"):
			return text("Pack light layers, sunglasses and a small umbrella: " + result)
		case last.Role == "tool":
			return text("Lisbon next week: 18-24°C, mostly sunny, one rainy day.")
		default:
			return call("get_forecast", `{"city":"Lisbon"}`)
		}
	})
	check(t, &openai.Config{Model: "gpt-test", BaseURL: srv.BaseURL(), APIKey: "test-key"})
	if n := len(srv.Requests()); n != 5 {
		t.Fatalf("%d requests, want 5 (triage 1, travel 2, researcher 2)", n)
	}
}

func check(t *testing.T, cfg *openai.Config) {
	t.Helper()
	var out strings.Builder
	if err := run(context.Background(), cfg, "What should I pack for Lisbon?", &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"triage hands off to travel",
		"    └ researcher starts: \"Weather forecast for Lisbon next week?\"",
		"      researcher → get_forecast: Lisbon next week",
		"  travel → researcher: Lisbon next week: 18-24°C",
		"travel answers: Pack light layers",
		"usage researcher 2 calls",
		"usage travel     2 calls",
		"usage triage     1 calls",
		"tokens, cost unknown (2 unpriced calls)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
