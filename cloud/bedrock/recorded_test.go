package bedrock_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/modelkit/modeltest"
	"github.com/runlet/runlet/runlettest"
)

// recorded reads a file of real Bedrock traffic (testdata/PROVENANCE).
func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replay answers one request with a recorded body and returns what the
// adapter made of it.
func replayStream(t *testing.T, name string, cfg bedrock.Config) *runlet.ModelResponse {
	t.Helper()
	srv := bedrocktest.NewServer(runlettest.WireReply{Body: recorded(t, name)})
	defer srv.Close()
	m := newModel(t, srv, cfg)
	return modeltest.CheckStream(t, m.Stream(ctx(t), hello()))
}

func replayGenerate(t *testing.T, name string, cfg bedrock.Config) (*runlet.ModelResponse, error) {
	t.Helper()
	srv := bedrocktest.NewServer(runlettest.WireReply{Body: recorded(t, name)})
	defer srv.Close()
	m := newModel(t, srv, cfg)
	return m.Generate(ctx(t), hello())
}

func parts[T runlet.Part](resp *runlet.ModelResponse) []T {
	var out []T
	for _, p := range resp.Message.Parts {
		if v, ok := p.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// Recorded ConverseStream responses (binary event streams with their
// CRCs, padding fields and all) decode to what they say.
func TestRecordedStreams(t *testing.T) {
	t.Run("claude thinking with signature", func(t *testing.T) {
		resp := replayStream(t, "thinking_stream.0.200.eventstream", bedrock.Config{})
		rs := parts[runlet.ReasoningPart](resp)
		if len(rs) != 1 || !strings.HasPrefix(rs[0].Text, "The user has") || !strings.HasPrefix(rs[0].Signature, "EqgBCkgI") && rs[0].Signature == "" || rs[0].Provider != "bedrock" {
			t.Errorf("reasoning %+v", rs)
		}
		if got := resp.Message.Text(); !strings.HasPrefix(got, "Hello") {
			t.Errorf("text %q", got)
		}
		if resp.Usage != (runlet.Usage{InputTokens: 36, OutputTokens: 73, TotalTokens: 109}) || resp.FinishReason != runlet.FinishStop {
			t.Errorf("usage %+v finish %s", resp.Usage, resp.FinishReason)
		}
	})
	t.Run("claude redacted thinking", func(t *testing.T) {
		resp := replayStream(t, "thinking_redacted_stream.0.200.eventstream", bedrock.Config{})
		rs := parts[runlet.ReasoningPart](resp)
		if len(rs) == 0 || rs[0].Encrypted == "" || rs[0].Text != "" {
			t.Fatalf("reasoning %+v, want a redacted block", rs)
		}
		if _, err := base64.StdEncoding.DecodeString(rs[0].Encrypted); err != nil {
			t.Errorf("Encrypted is not base64: %v", err)
		}
		if resp.Message.Text() == "" || resp.Usage.OutputTokens != 253 {
			t.Errorf("text %q usage %+v", resp.Message.Text(), resp.Usage)
		}
	})
	t.Run("nova text", func(t *testing.T) {
		resp := replayStream(t, "stream.0.200.eventstream", bedrock.Config{})
		if !strings.HasPrefix(resp.Message.Text(), "The capital of France is Paris.") || resp.Usage.InputTokens != 13 || resp.Usage.OutputTokens != 82 {
			t.Errorf("text %q usage %+v", resp.Message.Text(), resp.Usage)
		}
	})
	t.Run("nova tool call", func(t *testing.T) {
		resp := replayStream(t, "iter_stream.0.200.eventstream", bedrock.Config{})
		calls := resp.Message.ToolCalls()
		if len(calls) != 1 || calls[0].ID == "" || calls[0].Name == "" || !json.Valid(calls[0].Arguments) || resp.FinishReason != runlet.FinishToolCalls {
			t.Errorf("calls %+v finish %s", calls, resp.FinishReason)
		}
	})
	t.Run("server tool skipped", func(t *testing.T) {
		resp := replayStream(t, "code_execution_stream.0.200.eventstream", bedrock.Config{})
		calls := resp.Message.ToolCalls()
		if len(calls) != 1 || calls[0].Name != "final_result" || string(calls[0].Arguments) != `{"result":7006652.0}` {
			t.Errorf("calls %+v, want only final_result (nova_code_interpreter ran on Bedrock)", calls)
		}
	})
	t.Run("empty text delta and unsigned reasoning", func(t *testing.T) {
		resp := replayStream(t, "stream_empty_text_delta.0.200.eventstream", bedrock.Config{})
		if resp.Message.Text() != "Hello! How can I help you today?" || !strings.HasPrefix(resp.Message.Reasoning(), "The user just says") {
			t.Errorf("text %q reasoning %q", resp.Message.Text(), resp.Message.Reasoning())
		}
	})
}

// Recorded Converse responses decode to what they say: cache usage,
// reasoning with its signature, redacted reasoning, tool calls, the
// guardrail trace passed to OnResponse.
func TestRecordedResponses(t *testing.T) {
	t.Run("cache write then read", func(t *testing.T) {
		resp, err := replayGenerate(t, "cache_write_and_read.0.200.json", bedrock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		// inputTokens 2 + cacheWriteInputTokens 1322; totalTokens 1329.
		if want := (runlet.Usage{InputTokens: 1324, OutputTokens: 5, TotalTokens: 1329, CacheWriteTokens: 1322}); resp.Usage != want {
			t.Errorf("usage %+v, want %+v", resp.Usage, want)
		}
		resp, err = replayGenerate(t, "cache_write_and_read.1.200.json", bedrock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (runlet.Usage{InputTokens: 1324, OutputTokens: 5, TotalTokens: 1329, CachedInputTokens: 1322}); resp.Usage != want {
			t.Errorf("usage %+v, want %+v", resp.Usage, want)
		}
	})
	t.Run("reasoning with signature", func(t *testing.T) {
		resp, err := replayGenerate(t, "thinking_anthropic.0.200.json", bedrock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rs := parts[runlet.ReasoningPart](resp)
		if len(rs) != 1 || rs[0].Text == "" || rs[0].Signature == "" || rs[0].Provider != "bedrock" {
			t.Errorf("reasoning %+v", rs)
		}
	})
	t.Run("redacted reasoning", func(t *testing.T) {
		resp, err := replayGenerate(t, "thinking_redacted.0.200.json", bedrock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Output struct {
				Message struct {
					Content []struct {
						ReasoningContent *struct {
							RedactedContent string `json:"redactedContent"`
						} `json:"reasoningContent"`
					} `json:"content"`
				} `json:"message"`
			} `json:"output"`
		}
		_ = json.Unmarshal(recorded(t, "thinking_redacted.0.200.json"), &raw)
		rs := parts[runlet.ReasoningPart](resp)
		if len(rs) == 0 || rs[0].Encrypted == "" || rs[0].Encrypted != raw.Output.Message.Content[0].ReasoningContent.RedactedContent {
			t.Errorf("reasoning %+v, want the redactedContent as sent", rs)
		}
	})
	t.Run("guardrail trace", func(t *testing.T) {
		var info bedrock.ResponseInfo
		resp, err := replayGenerate(t, "guardrail_trace.0.200.json", bedrock.Config{OnResponse: func(_ context.Context, i bedrock.ResponseInfo) { info = i }})
		if err != nil {
			t.Fatal(err)
		}
		var trace bytes.Buffer
		_ = json.Compact(&trace, info.Trace)
		if !bytes.Contains(trace.Bytes(), []byte(`"guardrailId":"xbgw7g293v7o"`)) || !bytes.Contains(info.Metrics, []byte("1257")) || info.StopReason != "end_turn" {
			t.Errorf("trace %s metrics %s stop %q, want the guardrail trace and metrics", info.Trace, info.Metrics, info.StopReason)
		}
		if !strings.HasPrefix(resp.Message.Text(), "The capital of France is Paris.") {
			t.Errorf("text %q", resp.Message.Text())
		}
	})
	t.Run("tool call after server tool", func(t *testing.T) {
		resp, err := replayGenerate(t, "code_execution.0.200.json", bedrock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Message.ToolCalls()
		if len(calls) != 1 || calls[0].Name != "final_result" || resp.FinishReason != runlet.FinishToolCalls {
			t.Errorf("calls %+v finish %s", calls, resp.FinishReason)
		}
	})
	t.Run("validation error", func(t *testing.T) {
		srv := bedrocktest.NewServer()
		defer srv.Close()
		srv.InjectFault(runlettest.Fault{Status: http.StatusBadRequest, Body: string(recorded(t, "error_invalid_model.0.400.json")),
			Header: http.Header{"Content-Type": {"application/json"}, "X-Amzn-Errortype": {"ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}})
		m := newModel(t, srv, bedrock.Config{})
		_, err := m.Generate(ctx(t), hello())
		var perr *runlet.ProviderError
		if !errors.As(err, &perr) || perr.Code != "ValidationException" || perr.Message != "The provided model identifier is invalid." || perr.Retryable || perr.StatusCode != 400 {
			t.Errorf("error %#v", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests: a validation error is not retried", n)
		}
	})
}

// Recorded vercel/ai fixtures: an exception as the stream's first message
// (retryable: ModelStreamErrorException says to retry), and Nova 2's
// redacted reasoning text.
func TestRecordedVercelFixtures(t *testing.T) {
	srv := bedrocktest.NewServer(runlettest.WireReply{Body: recorded(t, "vercel_model_stream_error.eventstream")})
	defer srv.Close()
	m := newModel(t, srv, bedrock.Config{MaxRetries: -1})
	var err error
	for _, e := range m.Stream(ctx(t), hello()) {
		if e != nil {
			err = e
		}
	}
	var perr *runlet.ProviderError
	if !errors.As(err, &perr) || perr.Code != "ModelStreamErrorException" || perr.Message != "Model Stream Error" || !perr.Retryable || perr.StatusCode != 424 {
		t.Errorf("error %#v", err)
	}

	resp, err := replayGenerate(t, "vercel_nova2_high_reasoning.json", bedrock.Config{Model: "us.amazon.nova-2-lite-v1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Reasoning() != "[REDACTED]." || resp.Message.Text() != "ok" || resp.Usage.OutputTokens != 2980 {
		t.Errorf("reasoning %q text %q usage %+v", resp.Message.Reasoning(), resp.Message.Text(), resp.Usage)
	}
}
