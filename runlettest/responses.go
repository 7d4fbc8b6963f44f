package runlettest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/runlet/runlet"
)

// OpenAIResponsesServer is a fake OpenAI Responses API (POST .../responses)
// on loopback. It answers each request with the next scripted
// ResponsesTurn, as a JSON body or, when the request asks for
// "stream": true, as the API's typed event stream (response.created,
// response.output_item.added, response.output_text.delta, ...,
// response.completed). It records every request and can inject faults.
//
// Like the real API it returns encrypted_content on reasoning items only
// when the request's "include" lists "reasoning.encrypted_content", and it
// rejects (HTTP 400, with the API's messages) reasoning input items that
// lack an ID, lack encrypted content while "store" is false, or are not
// followed by an item with an ID, so tests catch requests the real API
// would refuse.
//
// Point an adapter at BaseURL:
//
//	srv := runlettest.NewOpenAIResponsesServer(runlettest.ResponsesTurn{
//		Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Hello!")},
//	})
//	defer srv.Close()
//	model := openai.NewResponses(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-5"})
type OpenAIResponsesServer struct {
	*httptest.Server
	wire

	// ChunkSize is the number of runes per streamed delta (text, arguments,
	// reasoning summary); zero means DefaultChunkSize and negative streams
	// each text in one delta. Set it before the first request.
	ChunkSize int

	script[ResponsesTurn]
}

// ResponsesTurn is one scripted response.
type ResponsesTurn struct {
	// ID is the response ID; empty means "resp_<n>".
	ID string
	// Model is the reported model; empty echoes the request's model.
	Model string
	// Items are the output items, in order.
	Items []ResponsesItem
	// Incomplete, when non-empty, ends the response as incomplete with this
	// reason ("max_output_tokens" or "content_filter").
	Incomplete string
	// Fail, when non-nil, fails the response after its items: a stream gets
	// an "error" event and response.failed; a JSON body has status "failed".
	Fail *ResponsesError
	// Usage is reported as given; the zero value reports EstimateUsage.
	Usage ResponsesUsage
	// Error, when set, is the answer instead: for a non-streaming request
	// an HTTP error (Error.Status, see ErrorStatus) in the API's error
	// envelope; for a stream an "error" event after ErrorAfter events, on
	// an HTTP 200 stream that then ends without a terminal event.
	Error      *WireError
	ErrorAfter int
	// Body, when set, is sent verbatim instead (as text/event-stream when
	// the request streams, else as application/json): a recorded response
	// to replay, or a malformed one.
	Body []byte
}

// ResponsesError is the error of a failed response.
type ResponsesError struct {
	Code    string
	Message string
}

// ResponsesUsage is the token usage a turn reports.
type ResponsesUsage struct {
	InputTokens, OutputTokens, ReasoningTokens, CachedTokens int
}

// ResponsesItem is one output item: a message, a function call or a
// reasoning item (Type "message", "function_call" or "reasoning"). Empty IDs
// are generated. Use ResponsesText, ResponsesRefusal, ResponsesFunctionCall
// and ResponsesReasoning to build them.
type ResponsesItem struct {
	Type string
	ID   string
	// Message: Text is output_text, or the refusal text when Refusal is set.
	Text    string
	Refusal bool
	// Function call.
	CallID, Name, Arguments string
	// Reasoning: summary parts and the opaque encrypted content.
	Summary          []string
	EncryptedContent string
}

// ResponsesText returns a message item with output text.
func ResponsesText(text string) ResponsesItem {
	return ResponsesItem{Type: "message", Text: text}
}

// ResponsesRefusal returns a message item with a refusal.
func ResponsesRefusal(text string) ResponsesItem {
	return ResponsesItem{Type: "message", Text: text, Refusal: true}
}

// ResponsesFunctionCall returns a function_call item; the call ID is
// generated.
func ResponsesFunctionCall(name, arguments string) ResponsesItem {
	return ResponsesItem{Type: "function_call", Name: name, Arguments: arguments}
}

// ResponsesReasoning returns a reasoning item with encrypted content and
// summary parts.
func ResponsesReasoning(encrypted string, summary ...string) ResponsesItem {
	return ResponsesItem{Type: "reasoning", EncryptedContent: encrypted, Summary: summary}
}

// NewOpenAIResponsesServer starts a fake Responses API serving turns in
// order. Close it when done.
func NewOpenAIResponsesServer(turns ...ResponsesTurn) *OpenAIResponsesServer {
	s := &OpenAIResponsesServer{script: script[ResponsesTurn]{queue: slices.Clone(turns), fromReply: respFromReply}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API root to configure an adapter with (".../v1").
func (s *OpenAIResponsesServer) BaseURL() string { return s.URL + "/v1" }

// Enqueue appends turns to the script.
func (s *OpenAIResponsesServer) Enqueue(turns ...ResponsesTurn) { s.enqueue(turns) }

// SetResponder sets a function that answers requests once the scripted
// turns are used up. Without one, such requests get an HTTP error in the
// API's error format.
func (s *OpenAIResponsesServer) SetResponder(f func(WireRequest) ResponsesTurn) { s.setResponder(f) }

func (s *OpenAIResponsesServer) serve(rw http.ResponseWriter, r *http.Request) {
	req, fault := s.record(r)
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		respFakeError(rw, http.StatusNotFound, "invalid_request_error", "", "runlettest: no route for "+r.Method+" "+r.URL.Path)
		return
	}
	if writeStatusFault(rw, fault) {
		return
	}
	if key := s.requiredKey(); key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		respFakeError(rw, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
		return
	}
	var body struct {
		Model   string          `json:"model"`
		Stream  bool            `json:"stream"`
		Store   *bool           `json:"store"`
		Include []string        `json:"include"`
		Input   json.RawMessage `json:"input"` // a string or a list of items
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		respFakeError(rw, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	var items []json.RawMessage
	if len(body.Input) > 0 && body.Input[0] == '[' {
		if err := json.Unmarshal(body.Input, &items); err != nil {
			respFakeError(rw, http.StatusBadRequest, "invalid_request_error", "", "Invalid 'input': "+err.Error())
			return
		}
	}
	store := body.Store == nil || *body.Store
	if msg := respCheckInput(items, store); msg != "" {
		respFakeError(rw, http.StatusBadRequest, "invalid_request_error", "", msg)
		return
	}

	turn, seq, ok := s.next(req)
	if !ok {
		respFakeError(rw, http.StatusBadRequest, "invalid_request_error", "", fmt.Sprintf("runlettest: no scripted response left (request %d)", seq))
		return
	}
	chunk := chunkSize(s.ChunkSize, 0)
	if turn.Body != nil {
		rw.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", seq))
		writeVerbatim(rw, turn.Body, body.Stream)
		return
	}
	if turn.Error != nil && (!body.Stream || turn.ErrorAfter <= 0) {
		rw.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", seq))
		respFakeError(rw, turn.Error.status(), turn.Error.Type, turn.Error.Code, turn.Error.Message)
		return
	}

	resp := respFakeBuild(turn, seq, body.Model, slices.Contains(body.Include, "reasoning.encrypted_content"), len(req.Body))
	if !body.Stream {
		if fault != nil && fault.Reset {
			resetConn(rw)
			return
		}
		data, _ := json.Marshal(resp)
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", seq))
		if fault != nil && fault.Truncate {
			data = data[:len(data)/2]
		}
		_, _ = rw.Write(data)
		return
	}
	rw.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", seq))
	w := newSSEWriter(rw, fault)
	respFakeStream(w, resp, chunk, turn.Error, turn.ErrorAfter)
}

// respFromReply renders a provider-neutral reply.
func respFromReply(w WireReply) ResponsesTurn {
	t := ResponsesTurn{ID: w.ID, Model: w.Model, Error: w.Error, ErrorAfter: w.ErrorAfter, Body: w.Body}
	if w.Reasoning != "" || w.ReasoningSignature != "" {
		t.Items = append(t.Items, ResponsesReasoning(w.ReasoningSignature, w.Reasoning))
	}
	switch {
	case w.Refusal != "":
		t.Items = append(t.Items, ResponsesRefusal(w.Refusal))
	case w.Text != "" || len(w.ToolCalls) == 0:
		t.Items = append(t.Items, ResponsesText(w.Text))
	}
	for _, c := range w.ToolCalls {
		t.Items = append(t.Items, ResponsesItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	switch w.Finish {
	case runlet.FinishLength:
		t.Incomplete = "max_output_tokens"
	case runlet.FinishContentFilter:
		t.Incomplete = "content_filter"
	}
	if u := w.Usage; u != nil {
		t.Usage = ResponsesUsage(*u)
	}
	return t
}

// respCheckInput mimics the API's checks on reasoning input items and
// returns its error message, or "".
func respCheckInput(input []json.RawMessage, store bool) string {
	type item struct {
		Type             string  `json:"type"`
		ID               *string `json:"id"`
		EncryptedContent *string `json:"encrypted_content"`
		Summary          *[]any  `json:"summary"`
	}
	items := make([]item, len(input))
	for i, raw := range input {
		_ = json.Unmarshal(raw, &items[i])
	}
	for i, it := range items {
		if it.Type != "reasoning" {
			continue
		}
		if it.ID == nil || *it.ID == "" {
			return fmt.Sprintf("Missing required parameter: 'input[%d].id'.", i)
		}
		if it.Summary == nil {
			return fmt.Sprintf("Missing required parameter: 'input[%d].summary'.", i)
		}
		if !store && (it.EncryptedContent == nil || *it.EncryptedContent == "") {
			return fmt.Sprintf("Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", *it.ID)
		}
		if i+1 >= len(items) || items[i+1].ID == nil || *items[i+1].ID == "" {
			return fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", *it.ID)
		}
	}
	return ""
}

func respFakeError(rw http.ResponseWriter, status int, typ, code, msg string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	_ = json.NewEncoder(rw).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
}
