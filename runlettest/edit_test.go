package runlettest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// An approval with edited arguments, on the wire of every adapter: the
// request after the resume carries the call with the arguments that ran,
// never the model's, and never the audit field; provider signatures are
// handled as each adapter's documentation says.
func TestEditedApprovalOnTheWire(t *testing.T) {
	type pathIn struct {
		Path string `json:"path"`
	}
	newAgent := func(m runlet.Model, ran *[]string) *runlet.Agent {
		del := runlet.NewTool("delete_file", "Deletes a file.", func(_ context.Context, in pathIn) (string, error) {
			*ran = append(*ran, in.Path)
			return "deleted " + in.Path, nil
		}, runlet.WithApproval())
		return &runlet.Agent{Name: "janitor", Model: m, Tools: []runlet.Tool{del}}
	}
	call := runlettest.WireReply{
		Reasoning: "The user wants /tmp/a gone.", ReasoningSignature: "c2lnbmVk",
		ToolCalls: []runlettest.WireToolCall{{ID: "c1", Name: "delete_file", Arguments: `{"path":"/tmp/a"}`}},
	}
	// what only some adapters do with the edited call
	extra := map[string]func(t *testing.T, body string){
		"anthropic": func(t *testing.T, body string) {
			// the thinking block goes back unchanged, signature and all
			if !strings.Contains(body, `"signature":"c2lnbmVk"`) {
				t.Errorf("thinking block not sent back: %s", body)
			}
		},
		"gemini": func(t *testing.T, body string) {
			// the model's signature does not go with arguments it did not make
			if !strings.Contains(body, `"thoughtSignature":"skip_thought_signature_validator","functionCall"`) {
				t.Errorf("edited call without the placeholder signature: %s", body)
			}
		},
	}
	for _, c := range wireCases(t) {
		t.Run(c.name, func(t *testing.T) {
			c.srv.EnqueueReplies(call, runlettest.WireReply{Text: "Done."})
			var ran []string
			agent := newAgent(c.model, &ran)
			store := runlet.NewMemoryStore()
			ctx := context.Background()
			before := len(c.srv.Requests())
			res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(ctx, agent, "Delete /tmp/a.")
			if err != nil || res.Status != runlet.StateInterrupted {
				t.Fatalf("res %+v err %v", res, err)
			}
			if res, err = runlet.NewRuntime(runlet.WithStore(store)).Resume(ctx, agent, res.RunID,
				runlet.ApproveWithArguments("c1", json.RawMessage(`{"path":"/tmp/a.bak"}`))); err != nil || res.Output != "Done." {
				t.Fatalf("res %+v err %v", res, err)
			}
			if len(ran) != 1 || ran[0] != "/tmp/a.bak" {
				t.Fatalf("ran %v", ran)
			}
			reqs := c.srv.Requests()[before:]
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			wantOnlyEdited(t, string(reqs[1].Body))
			if f := extra[c.name]; f != nil {
				f(t, string(reqs[1].Body))
			}
		})
	}
}

// wantOnlyEdited checks that body has the edited arguments and neither the
// model's nor the audit field.
func wantOnlyEdited(t *testing.T, body string) {
	t.Helper()
	// the model's path ends with a quote, escaped or not (the user's
	// message says "/tmp/a.")
	model := strings.Count(body, `/tmp/a"`) + strings.Count(body, `/tmp/a\"`)
	edited := strings.Count(body, `/tmp/a.bak`)
	if edited == 0 || model != 0 || strings.Contains(body, "original_arguments") {
		t.Errorf("next request has the edited arguments %d times, the model's %d times: %s", edited, model, body)
	}
}

// The Responses API chained with previous_response_id: the server's copy of
// the response holds the call as the model proposed it, so the request
// after an edited approval breaks the chain and sends the whole history;
// the one after that chains again.
func TestEditedApprovalBreaksResponsesChain(t *testing.T) {
	type pathIn struct {
		Path string `json:"path"`
	}
	srv := runlettest.NewOpenAIResponsesServer()
	t.Cleanup(srv.Close)
	srv.EnqueueReplies(
		runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{ID: "c1", Name: "delete_file", Arguments: `{"path":"/tmp/a"}`}}},
		runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{ID: "c2", Name: "delete_file", Arguments: `{"path":"/tmp/b"}`}}},
		runlettest.WireReply{Text: "Done."},
	)
	del := runlet.NewTool("delete_file", "Deletes a file.", func(_ context.Context, in pathIn) (string, error) {
		return "deleted " + in.Path, nil
	}, runlet.WithApproval())
	model := openai.NewResponses(openai.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "m", MaxRetries: -1})
	agent := &runlet.Agent{Name: "janitor", Model: model, Tools: []runlet.Tool{del},
		Options: map[string]any{"previous_response_id": "auto"}}
	store := runlet.NewMemoryStore()
	rt := runlet.NewRuntime(runlet.WithStore(store))
	ctx := context.Background()
	res, err := rt.Run(ctx, agent, "Delete /tmp/a and /tmp/b.")
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("res %+v err %v", res, err)
	}
	if res, err = rt.Resume(ctx, agent, res.RunID, runlet.ApproveWithArguments("c1", json.RawMessage(`{"path":"/tmp/a.bak"}`))); err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("res %+v err %v", res, err)
	}
	if res, err = rt.Resume(ctx, agent, res.RunID, runlet.Approve("c2")); err != nil || res.Output != "Done." {
		t.Fatalf("res %+v err %v", res, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	afterEdit, next := reqs[1].JSON(), reqs[2].JSON()
	if prev, ok := afterEdit["previous_response_id"]; ok {
		t.Errorf("request after the edit chains from %v, whose call is the model's", prev)
	}
	body := string(reqs[1].Body)
	if !strings.Contains(body, `"type":"function_call"`) || !strings.Contains(body, "Delete /tmp/a and /tmp/b.") {
		t.Errorf("request after the edit does not send the history: %s", body)
	}
	wantOnlyEdited(t, body)
	if _, ok := next["previous_response_id"]; !ok {
		t.Errorf("the request after that does not chain again: %s", reqs[2].Body)
	}
}
