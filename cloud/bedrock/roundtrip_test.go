package bedrock_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

// The reasoning a Claude model returned through Bedrock goes back on the
// next turn exactly as it came (text and signature), before the text and
// the toolUse, as the recorded next request of the same exchange sent
// it: extended thinking keeps working across tool calls.
func TestReasoningRoundTripsAsRecorded(t *testing.T) {
	srv := bedrocktest.NewServer(runlettest.WireReply{Body: recorded(t, "tool_with_thinking.0.200.json")}, runlettest.WireReply{Text: "Mexico City"})
	defer srv.Close()
	m := newModel(t, srv, bedrock.Config{Model: "us.anthropic.claude-3-7-sonnet-20250219-v1:0"})
	schema := runlet.SchemaFor[struct{}]()
	req := &runlet.ModelRequest{
		Messages: []runlet.Message{runlet.UserText("What is the largest city in the user country?")},
		Tools:    []runlet.ToolSpec{{Name: "get_user_country", InputSchema: schema}},
		Settings: runlet.Settings{Reasoning: runlet.Reasoning{BudgetTokens: 1024}},
	}
	resp, err := m.Generate(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	call := resp.Message.ToolCalls()[0]
	req.Messages = append(req.Messages, resp.Message, runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: call.ID, Name: call.Name, Content: "Mexico"}}})
	if _, err := m.Generate(ctx(t), req); err != nil {
		t.Fatal(err)
	}

	type body struct {
		Messages   []json.RawMessage `json:"messages"`
		Additional json.RawMessage   `json:"additionalModelRequestFields"`
	}
	var ours, theirs body
	if err := json.Unmarshal(srv.Requests()[1].Body, &ours); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(recorded(t, "tool_with_thinking.1.200.request.json"), &theirs)
	if len(ours.Messages) != 3 {
		t.Fatalf("%d messages", len(ours.Messages))
	}
	if !jsonEqual(ours.Messages[1], theirs.Messages[1]) {
		t.Errorf("assistant message\n ours:     %s\n recorded: %s", ours.Messages[1], theirs.Messages[1])
	}
	if !jsonEqual(ours.Additional, theirs.Additional) {
		t.Errorf("additionalModelRequestFields %s, recorded %s", ours.Additional, theirs.Additional)
	}
}

// A streamed signature and redacted content go back unchanged too.
func TestStreamedReasoningRoundTrips(t *testing.T) {
	for _, name := range []string{"thinking_stream.0.200.eventstream", "thinking_redacted_stream.0.200.eventstream"} {
		t.Run(name, func(t *testing.T) {
			resp := replayStream(t, name, bedrock.Config{})
			srv := bedrocktest.NewServer(runlettest.WireReply{Text: "ok"})
			defer srv.Close()
			m := newModel(t, srv, bedrock.Config{})
			req := hello()
			req.Messages = append(req.Messages, resp.Message, runlet.UserText("And?"))
			if _, err := m.Generate(ctx(t), req); err != nil {
				t.Fatal(err)
			}
			want := wantReasoningBlock(t, name)
			if !bytes.Contains(srv.Requests()[0].Body, want) {
				t.Errorf("request %s\nlacks %s", srv.Requests()[0].Body, want)
			}
		})
	}
}

// wantReasoningBlock is the reasoningContent block a recorded stream's
// first content block makes, as the API takes it back: its deltas'
// text and signature joined, or its redactedContent.
func wantReasoningBlock(t *testing.T, name string) []byte {
	t.Helper()
	f := bedrock.NewFrameReader(bytes.NewReader(recorded(t, name)), 1<<20)
	var text, sig, redacted string
	for {
		typ, payload, err := f.Next()
		if err != nil {
			break
		}
		var ev struct {
			Index int `json:"contentBlockIndex"`
			Delta struct {
				R *struct {
					Text, Signature, RedactedContent string
				} `json:"reasoningContent"`
			} `json:"delta"`
		}
		if typ != "contentBlockDelta" || json.Unmarshal(payload, &ev) != nil || ev.Index != 0 || ev.Delta.R == nil {
			continue
		}
		text += ev.Delta.R.Text
		sig += ev.Delta.R.Signature
		redacted += ev.Delta.R.RedactedContent
	}
	var block any
	if redacted != "" {
		block = map[string]any{"reasoningContent": map[string]any{"redactedContent": redacted}}
	} else {
		type rt struct {
			Text      string `json:"text"`
			Signature string `json:"signature"`
		}
		block = map[string]any{"reasoningContent": map[string]any{"reasoningText": rt{text, sig}}}
	}
	b, _ := json.Marshal(block)
	if sig == "" && redacted == "" {
		t.Fatal("the recording has no signature or redacted content")
	}
	return b
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Settings.Reasoning.Effort reaches a Claude 4.6 model as the recorded
// request that Bedrock accepted sent it: adaptive thinking with
// output_config.effort in additionalModelRequestFields.
func TestEffortAsRecorded(t *testing.T) {
	srv := bedrocktest.NewServer(runlettest.WireReply{Body: recorded(t, "thinking_adaptive_effort.0.200.json")})
	defer srv.Close()
	m := newModel(t, srv, bedrock.Config{Model: "us.anthropic.claude-sonnet-4-6"})
	req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("How do I cross the street?")},
		Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh}}}
	resp, err := m.Generate(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() == "" {
		t.Error("no text")
	}
	type body struct {
		Additional json.RawMessage `json:"additionalModelRequestFields"`
	}
	var ours, theirs body
	_ = json.Unmarshal(srv.Requests()[0].Body, &ours)
	_ = json.Unmarshal(recorded(t, "thinking_adaptive_effort.0.200.request.json"), &theirs)
	if !jsonEqual(ours.Additional, theirs.Additional) {
		t.Errorf("additionalModelRequestFields %s, recorded %s", ours.Additional, theirs.Additional)
	}
}
