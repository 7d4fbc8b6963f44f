package bedrocktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// exception is the Bedrock exception and status for a scripted error.
func exception(e *runlettest.WireError) (status int, code string) {
	switch {
	case strings.HasSuffix(e.Type, "Exception"):
		code = e.Type
	case e.Type == "rate_limit_error" || e.Code == "rate_limit_exceeded":
		code = "ThrottlingException"
	case e.Type == "overloaded_error":
		code = "ServiceUnavailableException"
	case e.Type == "invalid_request_error":
		code = "ValidationException"
	case e.Type == "authentication_error":
		code = "UnrecognizedClientException"
	case e.Type == "permission_error":
		code = "AccessDeniedException"
	case e.Type == "not_found_error":
		code = "ResourceNotFoundException"
	default:
		code = "InternalServerException"
	}
	status = e.Status
	if status == 0 {
		status = map[string]int{
			"ThrottlingException": 429, "ModelNotReadyException": 429, "ServiceUnavailableException": 503,
			"ValidationException": 400, "UnrecognizedClientException": 403, "AccessDeniedException": 403,
			"ResourceNotFoundException": 404, "ModelTimeoutException": 408, "ModelErrorException": 424,
			"ModelStreamErrorException": 424, "ServiceQuotaExceededException": 400,
		}[code]
		if status == 0 {
			status = 500
		}
	}
	return status, code
}

func stopReason(r runlettest.WireReply) string {
	switch r.Finish {
	case runlet.FinishLength:
		return "max_tokens"
	case runlet.FinishContentFilter, runlet.FinishRefusal:
		return "content_filtered"
	case runlet.FinishToolCalls:
		return "tool_use"
	case "":
		if len(r.ToolCalls) > 0 {
			return "tool_use"
		}
	}
	return "end_turn"
}

func usage(r runlettest.WireReply, requestBytes int) map[string]int {
	u := runlettest.EstimateUsage(requestBytes, r.Reasoning, r.Text, r.Refusal)
	if r.Usage != nil {
		u = *r.Usage
	}
	out := map[string]int{"inputTokens": u.InputTokens, "outputTokens": u.OutputTokens, "totalTokens": u.InputTokens + u.CachedTokens + u.OutputTokens}
	if u.CachedTokens > 0 {
		out["cacheReadInputTokens"] = u.CachedTokens
	}
	return out
}

func toolID(c runlettest.WireToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("tooluse_bedrocktest%02d", i)
}

// content renders a reply's content blocks.
func content(r runlettest.WireReply) []any {
	var blocks []any
	if r.Reasoning != "" || r.ReasoningSignature != "" {
		rt := map[string]any{"text": r.Reasoning}
		if r.ReasoningSignature != "" {
			rt["signature"] = r.ReasoningSignature
		}
		blocks = append(blocks, map[string]any{"reasoningContent": map[string]any{"reasoningText": rt}})
	}
	text := r.Text
	if r.Refusal != "" {
		text = r.Refusal
	}
	if text != "" || len(r.ToolCalls) == 0 {
		blocks = append(blocks, map[string]any{"text": text})
	}
	for i, c := range r.ToolCalls {
		args := json.RawMessage(c.Arguments)
		if !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		blocks = append(blocks, map[string]any{"toolUse": map[string]any{"toolUseId": toolID(c, i), "name": c.Name, "input": args}})
	}
	return blocks
}

// writeConverse answers a Converse request.
func writeConverse(rw http.ResponseWriter, r runlettest.WireReply, requestBytes int, f *runlettest.Fault) {
	if r.Body != nil {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write(r.Body)
		return
	}
	if r.Error != nil {
		status, code := exception(r.Error)
		writeError(rw, status, code, r.Error.Message)
		return
	}
	body, _ := json.Marshal(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content(r)}},
		"stopReason": stopReason(r),
		"usage":      usage(r, requestBytes),
		"metrics":    map[string]int{"latencyMs": 1},
	})
	if f != nil && f.Reset {
		reset(rw)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("X-Amzn-RequestId", "bedrocktest-request")
	if f != nil && f.Truncate {
		rw.Header().Set("Content-Length", fmt.Sprint(len(body)))
		rw.WriteHeader(http.StatusOK)
		_, _ = rw.Write(body[:len(body)/2])
		reset(rw)
		return
	}
	_, _ = rw.Write(body)
}

// reset closes the connection without a proper HTTP ending.
func reset(rw http.ResponseWriter) {
	if fl, ok := rw.(http.Flusher); ok {
		fl.Flush()
	}
	if hj, ok := rw.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// streamWriter writes event-stream messages, flushing after each, and
// applies a fault after its AfterEvents events.
type streamWriter struct {
	rw      http.ResponseWriter
	req     *http.Request
	enc     *eventstream.Encoder
	fault   *runlettest.Fault
	events  int
	stopped bool
}

// message writes one message; false once the fault stopped the stream.
func (s *streamWriter) message(headers eventstream.Headers, payload []byte) bool {
	if s.stopped {
		return false
	}
	if f := s.fault; f != nil && (f.Reset || f.Truncate || f.Stall) && s.events >= f.AfterEvents {
		s.stopped = true
		switch {
		case f.Reset:
			reset(s.rw)
		case f.Stall:
			<-s.req.Context().Done()
		}
		return false
	}
	var buf bytes.Buffer
	_ = s.enc.Encode(&buf, eventstream.Message{Headers: headers, Payload: payload})
	_, _ = s.rw.Write(buf.Bytes())
	if fl, ok := s.rw.(http.Flusher); ok {
		fl.Flush()
	}
	s.events++
	return true
}

func (s *streamWriter) event(typ string, v any) bool {
	payload, _ := json.Marshal(v)
	var h eventstream.Headers
	h.Set(":event-type", eventstream.StringValue(typ))
	h.Set(":content-type", eventstream.StringValue("application/json"))
	h.Set(":message-type", eventstream.StringValue("event"))
	return s.message(h, payload)
}

func (s *streamWriter) exception(e *runlettest.WireError) bool {
	_, code := exception(e)
	var h eventstream.Headers
	h.Set(":exception-type", eventstream.StringValue(strings.ToLower(code[:1])+code[1:]))
	h.Set(":content-type", eventstream.StringValue("application/json"))
	h.Set(":message-type", eventstream.StringValue("exception"))
	payload, _ := json.Marshal(map[string]string{"message": e.Message})
	return s.message(h, payload)
}

// writeStream answers a ConverseStream request.
func writeStream(rw http.ResponseWriter, req *http.Request, r runlettest.WireReply, requestBytes int, f *runlettest.Fault) {
	if r.Body != nil {
		rw.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = rw.Write(r.Body)
		return
	}
	if r.Error != nil && r.ErrorAfter <= 0 {
		status, code := exception(r.Error)
		writeError(rw, status, code, r.Error.Message)
		return
	}
	if f != nil && f.Reset && f.AfterEvents == 0 {
		reset(rw)
		return
	}
	rw.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	rw.Header().Set("X-Amzn-RequestId", "bedrocktest-request")
	rw.WriteHeader(http.StatusOK)
	if fl, ok := rw.(http.Flusher); ok {
		fl.Flush()
	}
	s := &streamWriter{rw: rw, req: req, enc: eventstream.NewEncoder(), fault: f}
	// send writes an event, or the scripted exception in its place once
	// ErrorAfter events went out; false ends the stream.
	send := func(typ string, v any) bool {
		if r.Error != nil && s.events >= r.ErrorAfter {
			s.exception(r.Error)
			return false
		}
		return s.event(typ, v)
	}
	if !send("messageStart", map[string]string{"role": "assistant"}) {
		return
	}
	n := runlettest.DefaultChunkSize
	idx := 0
	if r.Reasoning != "" || r.ReasoningSignature != "" {
		for _, c := range chunks(r.Reasoning, n) {
			if !send("contentBlockDelta", map[string]any{"contentBlockIndex": idx, "delta": map[string]any{"reasoningContent": map[string]string{"text": c}}}) {
				return
			}
		}
		if r.ReasoningSignature != "" && !send("contentBlockDelta", map[string]any{"contentBlockIndex": idx, "delta": map[string]any{"reasoningContent": map[string]string{"signature": r.ReasoningSignature}}}) {
			return
		}
		if !send("contentBlockStop", map[string]int{"contentBlockIndex": idx}) {
			return
		}
		idx++
	}
	text := r.Text
	if r.Refusal != "" {
		text = r.Refusal
	}
	if text != "" || len(r.ToolCalls) == 0 {
		for _, c := range chunks(text, n) {
			if !send("contentBlockDelta", map[string]any{"contentBlockIndex": idx, "delta": map[string]string{"text": c}}) {
				return
			}
		}
		if !send("contentBlockStop", map[string]int{"contentBlockIndex": idx}) {
			return
		}
		idx++
	}
	for i, c := range r.ToolCalls {
		if !send("contentBlockStart", map[string]any{"contentBlockIndex": idx, "start": map[string]any{"toolUse": map[string]string{"toolUseId": toolID(c, i), "name": c.Name}}}) {
			return
		}
		for _, a := range chunks(c.Arguments, n) {
			if !send("contentBlockDelta", map[string]any{"contentBlockIndex": idx, "delta": map[string]any{"toolUse": map[string]string{"input": a}}}) {
				return
			}
		}
		if !send("contentBlockStop", map[string]int{"contentBlockIndex": idx}) {
			return
		}
		idx++
	}
	if r.Error != nil { // a stream shorter than ErrorAfter: the error is its end
		s.exception(r.Error)
		return
	}
	if !send("messageStop", map[string]string{"stopReason": stopReason(r)}) {
		return
	}
	send("metadata", map[string]any{"usage": usage(r, requestBytes), "metrics": map[string]int{"latencyMs": 1}})
}

// chunks splits s into pieces of at most n runes.
func chunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	var out []string
	rs := []rune(s)
	for len(rs) > 0 {
		k := min(n, len(rs))
		out = append(out, string(rs[:k]))
		rs = rs[k:]
	}
	return out
}
