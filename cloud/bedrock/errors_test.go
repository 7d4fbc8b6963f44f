package bedrock_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

func awsError(status int, code string) runlettest.Fault {
	return runlettest.Fault{Status: status, Body: `{"message":"` + code + ` happened"}`,
		Header: http.Header{"Content-Type": {"application/json"}, "X-Amzn-Errortype": {code + ":http://internal.amazon.com/coral/com.amazon.bedrock/"}}}
}

// Bedrock's exceptions are *runlet.ProviderError with the exception as
// Code; the transient ones are retried like every adapter's 429 and 5xx,
// the others are not.
func TestExceptionsRetriedOrNot(t *testing.T) {
	tests := []struct {
		status    int
		code      string
		retryable bool
	}{
		{429, "ThrottlingException", true},
		{429, "ModelNotReadyException", true},
		{503, "ServiceUnavailableException", true},
		{500, "InternalServerException", true},
		{408, "ModelTimeoutException", true},
		{424, "ModelStreamErrorException", true},
		{400, "ValidationException", false},
		{403, "AccessDeniedException", false},
		{400, "ServiceQuotaExceededException", false},
		{424, "ModelErrorException", false},
		{404, "ResourceNotFoundException", false},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			srv := bedrocktest.NewServer()
			defer srv.Close()
			m := newModel(t, srv, bedrock.Config{MaxRetries: 1})
			// Failing twice: the retry (if any) fails too, so the error is seen.
			srv.InjectFault(awsError(tt.status, tt.code), awsError(tt.status, tt.code))
			_, err := m.Generate(ctx(t), hello())
			var perr *runlet.ProviderError
			if !errors.As(err, &perr) || perr.Code != tt.code || perr.StatusCode != tt.status || perr.Retryable != tt.retryable || perr.Message != tt.code+" happened" {
				t.Fatalf("error %#v", err)
			}
			want := 1
			if tt.retryable {
				want = 2
			}
			if n := len(srv.Requests()); n != want {
				t.Errorf("%d requests, want %d", n, want)
			}
		})
	}

	// A throttled stream is retried before its first delta, and succeeds.
	srv := bedrocktest.NewServer()
	defer srv.Close()
	m := newModel(t, srv, bedrock.Config{})
	srv.InjectFault(awsError(429, "ThrottlingException"))
	srv.EnqueueReplies(runlettest.WireReply{Text: "after the throttle"})
	var text string
	for ev, err := range m.Stream(ctx(t), hello()) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == runlet.StreamDone {
			text = ev.Response.Message.Text()
		}
	}
	if text != "after the throttle" || len(srv.Requests()) != 2 {
		t.Errorf("text %q after %d requests", text, len(srv.Requests()))
	}
}

// An exception inside the event stream ends it with a *runlet.ProviderError
// named after the exception: retried when it comes before the first
// delta, returned as is once deltas reached the caller.
func TestStreamExceptions(t *testing.T) {
	for _, tt := range []struct {
		typ       string
		status    int
		retryable bool
	}{
		{"ThrottlingException", 429, true},
		{"ModelStreamErrorException", 424, true},
		{"ServiceUnavailableException", 503, true},
		{"InternalServerException", 500, true},
		{"ValidationException", 400, false},
	} {
		t.Run(tt.typ, func(t *testing.T) {
			srv := bedrocktest.NewServer()
			defer srv.Close()
			m := newModel(t, srv, bedrock.Config{})
			srv.EnqueueReplies(runlettest.WireReply{Text: "Hello there, how are you?", Error: &runlettest.WireError{Type: tt.typ, Message: "boom"}, ErrorAfter: 3})
			deltas := 0
			var final error
			for ev, err := range m.Stream(ctx(t), hello()) {
				if err != nil {
					final = err
					break
				}
				if ev.Kind == runlet.StreamTextDelta {
					deltas++
				}
			}
			var perr *runlet.ProviderError
			if !errors.As(final, &perr) || perr.Code != tt.typ || perr.StatusCode != tt.status || perr.Retryable != tt.retryable || perr.Message != "boom" {
				t.Fatalf("error %#v", final)
			}
			if deltas != 2 || len(srv.Requests()) != 1 {
				t.Errorf("%d deltas, %d requests: no retry after deltas reached the caller", deltas, len(srv.Requests()))
			}

			// Before any delta: a transient exception is retried.
			srv.EnqueueReplies(runlettest.WireReply{Text: "x", Error: &runlettest.WireError{Type: tt.typ, Message: "boom"}, ErrorAfter: 1},
				runlettest.WireReply{Text: "second"})
			var err error
			for _, e := range m.Stream(ctx(t), hello()) {
				if e != nil {
					err = e
				}
			}
			if tt.retryable && (err != nil || len(srv.Requests()) != 3) {
				t.Errorf("before the first delta: %v after %d requests, want a retry that succeeds", err, len(srv.Requests()))
			}
			if !tt.retryable && (err == nil || len(srv.Requests()) != 2) {
				t.Errorf("before the first delta: %v after %d requests, want the error at once", err, len(srv.Requests()))
			}
		})
	}
}

// A stream that goes quiet past StreamIdleTimeout fails with a retryable
// error wrapping runlet.ErrStreamIncomplete, not a hang.
func TestStreamIdleTimeout(t *testing.T) {
	srv := bedrocktest.NewServer(runlettest.WireReply{Text: "Hello there, how are you today?"})
	defer srv.Close()
	srv.InjectFault(runlettest.Fault{Stall: true, AfterEvents: 3})
	m := newModel(t, srv, bedrock.Config{StreamIdleTimeout: 200 * time.Millisecond, MaxRetries: -1})
	var err error
	for _, e := range m.Stream(ctx(t), hello()) {
		if e != nil {
			err = e
		}
	}
	var perr *runlet.ProviderError
	if !errors.As(err, &perr) || !errors.Is(err, runlet.ErrStreamIncomplete) || !perr.Retryable {
		t.Errorf("error %v, want a retryable ErrStreamIncomplete", err)
	}
}

// Bedrock's stop reasons, streamed or not.
func TestStopReasons(t *testing.T) {
	for stop, want := range map[string]runlet.FinishReason{
		"end_turn": runlet.FinishStop, "stop_sequence": runlet.FinishStop, "tool_use": runlet.FinishToolCalls,
		"max_tokens": runlet.FinishLength, "model_context_window_exceeded": runlet.FinishLength,
		"guardrail_intervened": runlet.FinishContentFilter, "content_filtered": runlet.FinishContentFilter,
		"malformed_model_output": runlet.FinishOther, "malformed_tool_use": runlet.FinishOther,
	} {
		body := `{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"` + stop + `","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`
		srv := bedrocktest.NewServer(runlettest.WireReply{Body: []byte(body)})
		m := newModel(t, srv, bedrock.Config{})
		resp, err := m.Generate(ctx(t), hello())
		srv.Close()
		if err != nil || resp.FinishReason != want {
			t.Errorf("%s: %v %v, want %s", stop, resp, err, want)
		}
	}
	// Streamed: guardrail_intervened ends the stream as a content filter.
	srv := bedrocktest.NewServer(runlettest.WireReply{Text: "partial", Finish: runlet.FinishContentFilter})
	defer srv.Close()
	m := newModel(t, srv, bedrock.Config{})
	var finish runlet.FinishReason
	for ev, err := range m.Stream(ctx(t), hello()) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == runlet.StreamDone {
			finish = ev.Response.FinishReason
		}
	}
	if finish != runlet.FinishContentFilter {
		t.Errorf("streamed finish %s", finish)
	}
}
