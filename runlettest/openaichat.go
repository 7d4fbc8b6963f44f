package runlettest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"unicode/utf8"
)

// OpenAIChatServer is a fake OpenAI Chat Completions API
// (POST .../chat/completions) on loopback, for tests that run the real
// adapter end to end. It answers each request with the next scripted
// OpenAIChatReply, as a chat.completion JSON body or, when the request has
// "stream": true, as chat.completion.chunk events ending in "data: [DONE]",
// the way api.openai.com streams: a role chunk, reasoning deltas (as
// compatible servers send them), content or refusal deltas, tool-call
// deltas by index (the first with ID and name, then argument fragments), a
// finish chunk, and, when the request's stream_options.include_usage is
// true, a usage chunk with empty choices.
//
// It records every request (Requests), injects faults (InjectFault: HTTP
// status codes, connection resets, truncated streams), and answers 401 when
// RequireAPIKey was set and the bearer token differs, 400 for a body that is
// not JSON or has no messages, and 404 for other paths, each with OpenAI's
// error envelope {"error":{"message","type","param","code"}}.
//
// Point an adapter at BaseURL:
//
//	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Hello!"})
//	defer srv.Close()
//	model := openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-4o-mini"})
type OpenAIChatServer struct {
	*httptest.Server
	wire

	// ChunkSize is the size of each streamed text, reasoning, refusal or
	// argument delta, in units of Split; zero means DefaultChunkSize and
	// negative one delta per string. A reply's Deltas overrides it for that
	// reply's text. Set it (and the other fields) before the first request.
	ChunkSize int
	// Split says where streamed strings are cut; see ChatSplit.
	Split ChatSplit
	// InterleaveToolCalls sends the argument fragments of parallel tool
	// calls round-robin (call 0, call 1, call 0, ...) instead of one call
	// after the other, as some servers do.
	InterleaveToolCalls bool

	script[OpenAIChatReply]
}

// ChatSplit says where an OpenAIChatServer cuts streamed strings into
// deltas.
type ChatSplit int

const (
	// ChatSplitRunes cuts between characters, as real servers do.
	ChatSplitRunes ChatSplit = iota
	// ChatSplitBytes cuts anywhere, even inside a UTF-8 sequence; the
	// partial bytes are written raw into the JSON strings, so only the
	// joined deltas are valid UTF-8.
	ChatSplitBytes
	// ChatSplitUTF16 cuts between UTF-16 code units and writes every
	// non-ASCII character as a \u escape (as servers using Python's
	// ensure_ascii do), so a surrogate pair may be split across deltas.
	ChatSplitUTF16
)

// OpenAIChatReply is one scripted answer.
type OpenAIChatReply struct {
	// ID and Model default to "chatcmpl-runlettest-N" and the request's model.
	ID, Model string
	// Text is the content; Refusal, when set, is sent in the refusal field
	// instead (content null).
	Text    string
	Refusal string
	// Reasoning is sent in ReasoningField ("reasoning_content" when empty;
	// "reasoning" as Ollama, OpenRouter and Groq name it), before the
	// content, as compatible reasoning servers do.
	Reasoning      string
	ReasoningField string
	// ToolCalls are the function calls, in order (index 0, 1, ...).
	ToolCalls []OpenAIChatToolCall
	// FinishReason defaults to "tool_calls" when there are tool calls, else
	// "stop".
	FinishReason string
	// Usage is reported as given; nil reports EstimateUsage (reasoning
	// tokens: a quarter of the reasoning's runes).
	Usage *OpenAIChatUsage
	// Deltas, when positive, streams Text in exactly this many deltas (as
	// evenly as Split allows), overriding ChunkSize.
	Deltas int
	// Error, when set, is the answer instead: for a non-streaming request an
	// HTTP error (Error.Status) with the error envelope; for a stream, an
	// error chunk data: {"error":{...}} after ErrorAfter events, on an HTTP
	// 200 stream that then ends without [DONE], as the API reports failures
	// that happen mid-stream.
	Error      *OpenAIChatError
	ErrorAfter int
	// Body, when set, is sent verbatim instead (as text/event-stream when
	// the request streams, else as application/json): a recorded response
	// to replay, or a malformed one.
	Body []byte
}

// OpenAIChatToolCall is one scripted function call. An empty ID is
// generated; Arguments is the JSON text of the arguments.
type OpenAIChatToolCall struct {
	ID, Name, Arguments string
}

// OpenAIChatUsage is a scripted reply's token usage. A zero TotalTokens is
// reported as PromptTokens + CompletionTokens.
type OpenAIChatUsage struct {
	PromptTokens, CompletionTokens, TotalTokens int
	ReasoningTokens, CachedTokens               int
}

// OpenAIChatError is an error answer (the same type on every fake server);
// a zero Status is ErrorStatus(Type, Code). Streams ignore Status.
type OpenAIChatError = WireError

// NewOpenAIChatServer starts a fake Chat Completions API that answers the
// given replies in order. Close it when done.
func NewOpenAIChatServer(replies ...OpenAIChatReply) *OpenAIChatServer {
	s := &OpenAIChatServer{script: script[OpenAIChatReply]{queue: append([]OpenAIChatReply(nil), replies...), fromReply: chatFromReply}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API root to configure an adapter with (".../v1").
func (s *OpenAIChatServer) BaseURL() string { return s.URL + "/v1" }

type chatFakeRequest struct {
	Model         string            `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Stream        bool              `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// Enqueue appends replies to the script.
func (s *OpenAIChatServer) Enqueue(replies ...OpenAIChatReply) { s.enqueue(replies) }

// SetResponder sets a function that answers requests once the scripted
// replies are used up. Without one, such requests get an HTTP error in the
// API's error format.
func (s *OpenAIChatServer) SetResponder(f func(WireRequest) OpenAIChatReply) { s.setResponder(f) }

func (s *OpenAIChatServer) serve(rw http.ResponseWriter, r *http.Request) {
	req, fault := s.record(r)
	if writeStatusFault(rw, fault) {
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		chatFakeError(rw, &OpenAIChatError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: "runlettest: no route for " + r.Method + " " + r.URL.Path})
		return
	}
	key := s.requiredKey()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		chatFakeError(rw, &OpenAIChatError{Type: "invalid_request_error", Code: "invalid_api_key", Status: http.StatusUnauthorized,
			Message: "Incorrect API key provided."})
		return
	}
	var body chatFakeRequest
	if err := json.Unmarshal(req.Body, &body); err != nil {
		chatFakeError(rw, &OpenAIChatError{Type: "invalid_request_error",
			Message: "We could not parse the JSON body of your request: " + err.Error()})
		return
	}
	if len(body.Messages) == 0 {
		chatFakeError(rw, &OpenAIChatError{Type: "invalid_request_error", Code: "empty_array",
			Message: "Invalid 'messages': empty array. Expected an array with minimum length 1."})
		return
	}
	reply, n, ok := s.next(req)
	reqID := "req_runlettest_" + strconv.Itoa(n)
	rw.Header().Set("X-Request-Id", reqID)
	if !ok {
		chatFakeError(rw, &OpenAIChatError{Type: "server_error", Message: "runlettest: no scripted reply left"})
		return
	}
	if reply.ID == "" {
		reply.ID = "chatcmpl-runlettest-" + strconv.Itoa(n)
	}
	if reply.Model == "" {
		reply.Model = body.Model
	}
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" {
			reply.ToolCalls[i].ID = "call_runlettest_" + strconv.Itoa(n) + "_" + strconv.Itoa(i)
		}
	}
	if reply.Body != nil {
		writeVerbatim(rw, reply.Body, body.Stream)
		return
	}
	if body.Stream {
		s.stream(rw, &reply, fault, body.StreamOptions.IncludeUsage, len(req.Body))
		return
	}
	if reply.Error != nil {
		chatFakeError(rw, reply.Error)
		return
	}
	if fault != nil && fault.Reset {
		resetConn(rw)
		return
	}
	out := chatFakeCompletion(&reply, len(req.Body))
	rw.Header().Set("Content-Type", "application/json")
	if fault != nil && fault.Truncate {
		out = out[:len(out)/2] // no Content-Length: the client sees a clean end mid-JSON
	} else {
		rw.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(out)
}

func chatFakeError(rw http.ResponseWriter, e *OpenAIChatError) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(e.status())
	_, _ = rw.Write(chatFakeErrorBody(e))
}

func chatFakeErrorBody(e *OpenAIChatError) []byte {
	var code any
	if e.Code != "" {
		code = e.Code
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": e.Message, "type": e.Type, "param": nil, "code": code,
	}})
	return b
}

func (r *OpenAIChatReply) finishReason() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

type chatFakeUsageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (r *OpenAIChatReply) usage(requestBytes int) chatFakeUsageJSON {
	var u chatFakeUsageJSON
	if r.Usage != nil {
		u.PromptTokens, u.CompletionTokens = r.Usage.PromptTokens, r.Usage.CompletionTokens
		u.TotalTokens = r.Usage.TotalTokens
		u.PromptTokensDetails.CachedTokens = r.Usage.CachedTokens
		u.CompletionTokensDetails.ReasoningTokens = r.Usage.ReasoningTokens
	} else {
		out := []string{r.Text, r.Refusal, r.Reasoning}
		for _, c := range r.ToolCalls {
			out = append(out, c.Name, c.Arguments)
		}
		e := EstimateUsage(requestBytes, out...)
		u.PromptTokens, u.CompletionTokens = e.InputTokens, e.OutputTokens
		u.CompletionTokensDetails.ReasoningTokens = utf8.RuneCountInString(r.Reasoning) / 4
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// chatFromReply renders a provider-neutral reply.
func chatFromReply(w WireReply) OpenAIChatReply {
	r := OpenAIChatReply{ID: w.ID, Model: w.Model, Text: w.Text, Reasoning: w.Reasoning, Refusal: w.Refusal,
		Error: w.Error, ErrorAfter: w.ErrorAfter, Body: w.Body}
	if w.Finish != "" {
		r.FinishReason = string(w.finish())
	}
	for _, c := range w.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, OpenAIChatToolCall(c))
	}
	if u := w.Usage; u != nil {
		r.Usage = &OpenAIChatUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens,
			ReasoningTokens: u.ReasoningTokens, CachedTokens: u.CachedTokens}
	}
	return r
}

func chatFakeCompletion(r *OpenAIChatReply, requestBytes int) []byte {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
	if r.Refusal != "" {
		msg["refusal"] = r.Refusal
	} else if r.Text != "" || len(r.ToolCalls) == 0 {
		msg["content"] = r.Text
	}
	if r.Reasoning != "" {
		msg[r.reasoningField()] = r.Reasoning
	}
	if len(r.ToolCalls) > 0 {
		calls := make([]call, len(r.ToolCalls))
		for i, c := range r.ToolCalls {
			calls[i] = call{ID: c.ID, Type: "function", Function: fn{Name: c.Name, Arguments: c.Arguments}}
		}
		msg["tool_calls"] = calls
	}
	out, _ := json.Marshal(map[string]any{
		"id": r.ID, "object": "chat.completion", "created": chatFakeCreated, "model": r.Model,
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "logprobs": nil, "finish_reason": r.finishReason(),
		}},
		"usage":              r.usage(requestBytes),
		"service_tier":       "default",
		"system_fingerprint": "fp_runlettest",
	})
	return out
}

func (r *OpenAIChatReply) reasoningField() string {
	if r.ReasoningField != "" {
		return r.ReasoningField
	}
	return "reasoning_content"
}

// chatFakeCreated is the "created" timestamp of every fake response.
const chatFakeCreated = 1700000000
