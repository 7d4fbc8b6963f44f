package runlettest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
)

// AnthropicServer is a fake Anthropic Messages API (POST /v1/messages) on
// loopback. It answers scripted responses in order, as JSON or, when the
// request has "stream": true, as the API's event stream; records every
// request; and injects faults (InjectFault). Point the adapter at it with
// anthropic.Config{BaseURL: srv.URL}.
//
// Like the real API it answers 400 when the anthropic-version header,
// model, max_tokens or messages are missing, 401 when RequireAPIKey was set
// and x-api-key differs, and 404 for other paths, with Anthropic's error
// envelope {"type":"error","error":{"type","message"}}.
type AnthropicServer struct {
	*httptest.Server
	wire
	script[AnthropicResponse]

	// ChunkSize splits streamed text, thinking and tool input into deltas
	// of at most this many runes, for responses that set none; zero means
	// DefaultChunkSize and negative one delta per block. Set it before the
	// first request.
	ChunkSize int
}

// AnthropicResponse is one scripted answer.
type AnthropicResponse struct {
	// ID and Model default to "msg_runlettest_N" and the request's model.
	ID, Model string
	Content   []AnthropicBlock
	// StopReason defaults to "tool_use" when Content has a tool_use block,
	// else "end_turn". StopDetails goes with "refusal".
	StopReason  string
	StopDetails *AnthropicStopDetails
	// Usage is reported as given; the zero value reports EstimateUsage.
	Usage AnthropicUsage
	// ChunkSize overrides the server's ChunkSize for this response.
	ChunkSize int
	// Error, when set, is the answer instead: for a non-streaming request an
	// HTTP error (Error.Status) with the error envelope; for a stream an
	// "event: error" after ErrorAfter events, on an HTTP 200 stream, as the
	// API reports overloads that happen mid-stream.
	Error      *AnthropicError
	ErrorAfter int
	// Body, when set, is sent verbatim instead (as text/event-stream when the
	// request streams, else as JSON): a recorded response to replay.
	Body []byte
}

// AnthropicBlock is one content block of a scripted response.
type AnthropicBlock struct {
	// Type is "text", "tool_use", "thinking" or "redacted_thinking"; any
	// other type is sent from Raw.
	Type string
	Text string
	// ID, Name and Input (a JSON object; empty means {}) of a tool_use block.
	ID, Name, Input string
	// Thinking and Signature of a thinking block.
	Thinking, Signature string
	// Data of a redacted_thinking block.
	Data string
	// Raw is a whole block of another type (such as server_tool_use), sent
	// as is: in content, or in content_block_start followed by
	// content_block_stop.
	Raw json.RawMessage
	// Citations of a text block (citation objects, such as
	// web_search_result_location): in content, or as citations_delta
	// events after its text (see AnthropicCitedText).
	Citations []json.RawMessage
}

// AnthropicUsage is a scripted response's token usage.
type AnthropicUsage struct {
	InputTokens, OutputTokens                      int
	CacheCreationInputTokens, CacheReadInputTokens int
	// WebSearchRequests is usage.server_tool_use.web_search_requests.
	WebSearchRequests int
}

// AnthropicError is an error answer (the same type on every fake server;
// Anthropic's envelope has no Code). A zero Status is ErrorStatus(Type,
// Code): 529 for "overloaded_error", 429 for "rate_limit_error", 400 for
// "invalid_request_error", and so on.
type AnthropicError = WireError

// AnthropicText returns a text block.
func AnthropicText(text string) AnthropicBlock { return AnthropicBlock{Type: "text", Text: text} }

// AnthropicToolUse returns a tool_use block; input is a JSON object.
func AnthropicToolUse(id, name, input string) AnthropicBlock {
	return AnthropicBlock{Type: "tool_use", ID: id, Name: name, Input: input}
}

// AnthropicThinking returns a thinking block with its signature.
func AnthropicThinking(thinking, signature string) AnthropicBlock {
	return AnthropicBlock{Type: "thinking", Thinking: thinking, Signature: signature}
}

// AnthropicRedactedThinking returns a redacted_thinking block.
func AnthropicRedactedThinking(data string) AnthropicBlock {
	return AnthropicBlock{Type: "redacted_thinking", Data: data}
}

// NewAnthropicServer starts a fake Messages API that answers the given
// responses in order. The caller must Close it.
func NewAnthropicServer(responses ...AnthropicResponse) *AnthropicServer {
	s := &AnthropicServer{script: script[AnthropicResponse]{queue: responses, fromReply: anthropicFromReply}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the root to configure the adapter with
// (anthropic.Config.BaseURL); requests go to BaseURL()+"/v1/messages".
func (s *AnthropicServer) BaseURL() string { return s.URL }

// anthropicFromReply renders a provider-neutral reply.
// Enqueue appends responses to the script.
func (s *AnthropicServer) Enqueue(responses ...AnthropicResponse) { s.enqueue(responses) }

// SetResponder sets a function that answers requests once the scripted
// responses are used up. Without one, such requests get an HTTP error in the
// API's error format.
func (s *AnthropicServer) SetResponder(f func(WireRequest) AnthropicResponse) { s.setResponder(f) }

func (s *AnthropicServer) serve(rw http.ResponseWriter, r *http.Request) {
	req, fault := s.record(r)
	if writeStatusFault(rw, fault) {
		return
	}
	key := s.requiredKey()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeAnthropicError(rw, &AnthropicError{Type: "not_found_error", Message: "Not found"}, "")
		return
	}
	if key != "" && r.Header.Get("X-Api-Key") != key {
		writeAnthropicError(rw, &AnthropicError{Type: "authentication_error", Message: "invalid x-api-key"}, "")
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		writeAnthropicError(rw, &AnthropicError{Type: "invalid_request_error", Message: "anthropic-version: header is required"}, "")
		return
	}
	var body struct {
		Model     string            `json:"model"`
		MaxTokens int               `json:"max_tokens"`
		Messages  []json.RawMessage `json:"messages"`
		Stream    bool              `json:"stream"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		writeAnthropicError(rw, &AnthropicError{Type: "invalid_request_error", Message: "The request body is not valid JSON: " + err.Error()}, "")
		return
	}
	switch {
	case body.Model == "":
		writeAnthropicError(rw, &AnthropicError{Type: "invalid_request_error", Message: "model: Field required"}, "")
		return
	case body.MaxTokens < 1:
		writeAnthropicError(rw, &AnthropicError{Type: "invalid_request_error", Message: "max_tokens: Field required"}, "")
		return
	case len(body.Messages) == 0:
		writeAnthropicError(rw, &AnthropicError{Type: "invalid_request_error", Message: "messages: at least one message is required"}, "")
		return
	}

	if fault != nil && fault.Reset && !body.Stream {
		resetConn(rw) // before any body byte; the script is not consumed
		return
	}
	resp, n, ok := s.next(req)
	reqID := "req_runlettest_" + strconv.Itoa(n)
	rw.Header().Set("Request-Id", reqID)
	if !ok {
		writeAnthropicError(rw, &AnthropicError{Type: "api_error", Message: "runlettest: no scripted response left"}, reqID)
		return
	}
	if resp.ID == "" {
		resp.ID = "msg_runlettest_" + strconv.Itoa(n)
	}
	if resp.Model == "" {
		resp.Model = body.Model
	}
	resp.ChunkSize = chunkSize(s.ChunkSize, resp.ChunkSize)
	resp.Content = slices.Clone(resp.Content)
	var output []string
	for i, b := range resp.Content {
		if b.Type == "tool_use" && b.ID == "" {
			resp.Content[i].ID = "toolu_runlettest_" + strconv.Itoa(n) + "_" + strconv.Itoa(i)
		}
		output = append(output, b.Text, b.Thinking, b.Name, b.Input)
	}
	if resp.Usage == (AnthropicUsage{}) {
		e := EstimateUsage(len(req.Body), output...)
		resp.Usage = AnthropicUsage{InputTokens: e.InputTokens, OutputTokens: e.OutputTokens}
	}
	if resp.Body != nil {
		writeVerbatim(rw, resp.Body, body.Stream)
		return
	}
	if body.Stream {
		s.stream(rw, resp, fault, reqID)
		return
	}
	if resp.Error != nil {
		writeAnthropicError(rw, resp.Error, reqID)
		return
	}
	out, _ := json.Marshal(anthropicMessage(resp))
	rw.Header().Set("Content-Type", "application/json")
	if fault != nil && fault.Truncate {
		out = out[:len(out)/2] // no Content-Length: the client sees a clean end mid-JSON
	} else {
		rw.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(out)
}

func writeAnthropicError(rw http.ResponseWriter, e *AnthropicError, reqID string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(e.status())
	_, _ = rw.Write(anthropicErrorBody(e, reqID))
}

func anthropicErrorBody(e *AnthropicError, reqID string) []byte {
	type inner struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	out, _ := json.Marshal(struct {
		Type      string `json:"type"`
		Error     inner  `json:"error"`
		RequestID string `json:"request_id,omitempty"`
	}{"error", inner{e.Type, e.Message}, reqID})
	return out
}

// Wire shapes the server writes.

type anthropicUsageJSON struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	ServerToolUse            *struct {
		WebSearchRequests int `json:"web_search_requests"`
	} `json:"server_tool_use,omitempty"`
}

type anthropicMessageJSON struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []json.RawMessage  `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	StopDetails  *stopDetailsJSON   `json:"stop_details,omitempty"`
	Usage        anthropicUsageJSON `json:"usage"`
}

func (r AnthropicResponse) stopReason() string {
	if r.StopReason != "" {
		return r.StopReason
	}
	for _, b := range r.Content {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

func (r AnthropicResponse) usage() anthropicUsageJSON {
	u := anthropicUsageJSON{
		InputTokens:              r.Usage.InputTokens,
		CacheCreationInputTokens: r.Usage.CacheCreationInputTokens,
		CacheReadInputTokens:     r.Usage.CacheReadInputTokens,
		OutputTokens:             r.Usage.OutputTokens,
	}
	if n := r.Usage.WebSearchRequests; n > 0 {
		u.ServerToolUse = &struct {
			WebSearchRequests int `json:"web_search_requests"`
		}{n}
	}
	return u
}

func anthropicMessage(r AnthropicResponse) anthropicMessageJSON {
	stop := r.stopReason()
	content := make([]json.RawMessage, 0, len(r.Content))
	for _, b := range r.Content {
		content = append(content, b.full())
	}
	return anthropicMessageJSON{
		ID: r.ID, Type: "message", Role: "assistant", Model: r.Model,
		Content: content, StopReason: &stop, StopDetails: r.StopDetails.json(), Usage: r.usage(),
	}
}

// full is the complete block, as in a non-streaming response.
func (b AnthropicBlock) full() json.RawMessage {
	var v any
	switch b.Type {
	case "text":
		v = b.textJSON()
	case "tool_use":
		v = struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, b.input()}
	case "thinking":
		v = struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		}{b.Type, b.Thinking, b.Signature}
	case "redacted_thinking":
		v = struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}{b.Type, b.Data}
	default:
		return b.Raw
	}
	out, _ := json.Marshal(v)
	return out
}

func (b AnthropicBlock) input() json.RawMessage {
	if b.Input == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(b.Input)
}

// start is the block as content_block_start announces it: empty text,
// thinking and input, which the deltas then fill in.
func (b AnthropicBlock) start() json.RawMessage {
	switch b.Type {
	case "text":
		return json.RawMessage(`{"type":"text","text":""}`)
	case "thinking":
		return json.RawMessage(`{"type":"thinking","thinking":"","signature":""}`)
	case "tool_use":
		out, _ := json.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, json.RawMessage("{}")})
		return out
	}
	return b.full()
}

type anthropicDeltaJSON struct {
	Type        string  `json:"type"`
	Text        string  `json:"text,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
	Thinking    *string `json:"thinking,omitempty"`
	Signature   string  `json:"signature,omitempty"`
}

func (s *AnthropicServer) stream(rw http.ResponseWriter, r AnthropicResponse, f *Fault, reqID string) {
	w := newSSEWriter(rw, f)
	emit := func(name string, v any) bool {
		if r.Error != nil && w.events >= r.ErrorAfter {
			w.event("error", anthropicErrorBody(r.Error, reqID))
			return false
		}
		data, _ := json.Marshal(v)
		return w.event(name, data)
	}
	type idx struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	type blockStart struct {
		Type         string          `json:"type"`
		Index        int             `json:"index"`
		ContentBlock json.RawMessage `json:"content_block"`
	}
	type blockDelta struct {
		Type  string             `json:"type"`
		Index int                `json:"index"`
		Delta anthropicDeltaJSON `json:"delta"`
	}

	start := anthropicMessageJSON{ID: r.ID, Type: "message", Role: "assistant", Model: r.Model, Content: []json.RawMessage{}, Usage: r.usage()}
	start.Usage.OutputTokens = 1
	if !emit("message_start", struct {
		Type    string               `json:"type"`
		Message anthropicMessageJSON `json:"message"`
	}{"message_start", start}) {
		return
	}
	for i, b := range r.Content {
		if !emit("content_block_start", blockStart{"content_block_start", i, b.start()}) {
			return
		}
		if i == 0 && !emit("ping", struct {
			Type string `json:"type"`
		}{"ping"}) {
			return
		}
		var pieces []string
		var delta func(string) anthropicDeltaJSON
		switch b.Type {
		case "text":
			pieces = chunks(b.Text, r.ChunkSize)
			delta = func(p string) anthropicDeltaJSON { return anthropicDeltaJSON{Type: "text_delta", Text: p} }
		case "thinking":
			pieces = chunks(b.Thinking, r.ChunkSize)
			delta = func(p string) anthropicDeltaJSON { return anthropicDeltaJSON{Type: "thinking_delta", Thinking: &p} }
		case "tool_use":
			// The API opens tool input with an empty fragment.
			pieces = append([]string{""}, chunks(string(b.input()), r.ChunkSize)...)
			if b.Input == "" {
				pieces = pieces[:1]
			}
			delta = func(p string) anthropicDeltaJSON {
				return anthropicDeltaJSON{Type: "input_json_delta", PartialJSON: &p}
			}
		}
		for _, p := range pieces {
			if !emit("content_block_delta", blockDelta{"content_block_delta", i, delta(p)}) {
				return
			}
		}
		for _, c := range b.Citations {
			if !emit("content_block_delta", citationDelta(i, c)) {
				return
			}
		}
		if b.Type == "thinking" && b.Signature != "" {
			if !emit("content_block_delta", blockDelta{"content_block_delta", i, anthropicDeltaJSON{Type: "signature_delta", Signature: b.Signature}}) {
				return
			}
		}
		if !emit("content_block_stop", idx{"content_block_stop", i}) {
			return
		}
	}
	stop := r.stopReason()
	type msgDelta struct {
		StopReason   string           `json:"stop_reason"`
		StopSequence *string          `json:"stop_sequence"`
		StopDetails  *stopDetailsJSON `json:"stop_details,omitempty"`
	}
	type outUsage struct {
		OutputTokens int `json:"output_tokens"`
	}
	if !emit("message_delta", struct {
		Type  string   `json:"type"`
		Delta msgDelta `json:"delta"`
		Usage outUsage `json:"usage"`
	}{"message_delta", msgDelta{StopReason: stop, StopDetails: r.StopDetails.json()}, outUsage{r.Usage.OutputTokens}}) {
		return
	}
	if r.Error != nil { // a stream shorter than ErrorAfter: the error ends it
		w.event("error", anthropicErrorBody(r.Error, reqID))
		return
	}
	emit("message_stop", struct {
		Type string `json:"type"`
	}{"message_stop"})
}
