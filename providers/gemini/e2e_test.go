package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/runlettest"
)

type weatherIn struct {
	City string `json:"city"`
}

func weatherTool() runlet.Tool {
	return runlet.NewTool("get_weather", "Current weather for a city.", func(ctx context.Context, in weatherIn) (string, error) {
		return "sunny in " + in.City, nil
	})
}

// A streamed tool loop with thinking through the fake Gemini server, which
// enforces Gemini 3's rule: the second request must carry the signatures
// the first response issued, byte for byte, on the same parts.
func TestE2EStreamedToolLoopWithThinking(t *testing.T) {
	srv := runlettest.NewGeminiServer(
		runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{
			runlettest.GeminiThought("The user wants weather.", "dGhvdWdodA+/="),
			{Text: "Let me check.", Signature: "dGV4dA+/="},
			runlettest.GeminiCall("", "get_weather", `{"city":"Paris"}`), // signed by the server
		}},
		runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{runlettest.GeminiText("It is sunny in Paris.")}},
	)
	defer srv.Close()
	srv.RequireAPIKey("k")
	agent := &runlet.Agent{
		Instructions: "Be brief.",
		Model:        gemini.New(gemini.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gemini-3-flash-preview"}),
		Tools:        []runlet.Tool{weatherTool()},
		Options:      map[string]any{"include_thoughts": true, "thinking_level": "low"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var text, reasoning strings.Builder
	for ev, err := range runlet.NewRuntime().Stream(ctx, agent, "Weather in Paris?") {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *runlet.TextDelta:
			text.WriteString(ev.Delta)
		case *runlet.ReasoningDelta:
			reasoning.WriteString(ev.Delta)
		}
	}
	if !strings.HasSuffix(text.String(), "It is sunny in Paris.") || reasoning.String() != "The user wants weather." {
		t.Fatalf("text %q reasoning %q", text.String(), reasoning.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.HasSuffix(reqs[0].Path, ":streamGenerateContent") {
		t.Fatalf("%d requests", len(reqs))
	}
	var second struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string          `json:"text"`
				Thought          bool            `json:"thought"`
				FunctionCall     json.RawMessage `json:"functionCall"`
				FunctionResponse json.RawMessage `json:"functionResponse"`
				ThoughtSignature string          `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
		GenerationConfig map[string]any `json:"generationConfig"`
	}
	if err := json.Unmarshal(reqs[1].Body, &second); err != nil {
		t.Fatal(err)
	}
	if len(second.Contents) != 3 {
		t.Fatalf("contents %s", reqs[1].Body)
	}
	model := second.Contents[1].Parts
	if len(model) != 3 || !model[0].Thought || model[0].ThoughtSignature != "dGhvdWdodA+/=" || model[1].ThoughtSignature != "dGV4dA+/=" ||
		model[2].ThoughtSignature == "" || model[2].ThoughtSignature == runlettest.SkipThoughtSignature {
		t.Fatalf("model turn not replayed with its signatures: %s", reqs[1].Body)
	}
	if !strings.Contains(string(second.Contents[2].Parts[0].FunctionResponse), `"output":"sunny in Paris"`) {
		t.Errorf("function response %s", second.Contents[2].Parts[0].FunctionResponse)
	}
	if tc, _ := second.GenerationConfig["thinkingConfig"].(map[string]any); tc["includeThoughts"] != true || tc["thinkingLevel"] != "low" {
		t.Errorf("generationConfig %v", second.GenerationConfig)
	}
}

// The fake server's rule makes the test able to fail: a history whose
// signature was altered is rejected with a typed 400.
func TestE2ECorruptedSignatureRejected(t *testing.T) {
	srv := runlettest.NewGeminiServer(runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{runlettest.GeminiText("never")}})
	defer srv.Close()
	m := gemini.New(gemini.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gemini-3-pro-preview", MaxRetries: -1})
	req := &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("q"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "c1", Name: "f", Arguments: json.RawMessage(`{}`), Signature: "altered", Provider: "gemini"}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c1", Name: "f", Content: "x"}}},
	}}
	_, err := m.Generate(context.Background(), req)
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 400 || pe.Code != "INVALID_ARGUMENT" || !strings.Contains(pe.Message, "Corrupted thought signature") {
		t.Fatalf("%v", err)
	}
	// The same history from another provider gets the documented placeholder and passes.
	req.Messages[1].Parts[0] = runlet.ToolCallPart{ID: "c1", Name: "f", Arguments: json.RawMessage(`{}`), Provider: "anthropic"}
	if resp, err := m.Generate(context.Background(), req); err != nil || resp.Message.Text() != "never" {
		t.Fatalf("%v %+v", err, resp)
	}
}

// The provider-neutral script drives the Gemini adapter like the others.
func TestE2EWireReply(t *testing.T) {
	srv := runlettest.NewGeminiServer()
	defer srv.Close()
	srv.EnqueueReplies(
		runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		runlettest.WireReply{Text: "Cold.", Usage: &runlettest.WireUsage{InputTokens: 10, OutputTokens: 5, ReasoningTokens: 2}},
	)
	agent := &runlet.Agent{Model: gemini.New(gemini.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gemini-3-pro-preview"}), Tools: []runlet.Tool{weatherTool()}}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "Oslo?")
	if err != nil || res.Output != "Cold." {
		t.Fatalf("%v %+v", err, res)
	}
}
