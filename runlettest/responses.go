package runlettest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

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
	if turn.Error != nil && fault == nil {
		w.fault = &Fault{Truncate: true, AfterEvents: turn.ErrorAfter}
	}
	respFakeStream(w, resp, chunk)
	if turn.Error != nil && fault == nil && w.stopped {
		w.fault, w.stopped = nil, false
		data, _ := json.Marshal(&respFakeErrorEvent{Type: "error", SequenceNumber: w.events, Code: turn.Error.Code, Message: turn.Error.Message})
		w.event("error", data)
	}
}

// respFromReply renders a provider-neutral reply.
func respFromReply(w WireReply) ResponsesTurn {
	t := ResponsesTurn{ID: w.ID, Model: w.Model, Error: w.Error, ErrorAfter: w.ErrorAfter, Body: w.Body}
	if w.Reasoning != "" || w.ReasoningSignature != "" {
		t.Items = append(t.Items, ResponsesReasoning(w.ReasoningSignature, w.Reasoning))
	}
	if w.Text != "" || len(w.ToolCalls) == 0 {
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

// Wire shapes of the fake's responses, following the OpenAPI document
// (required fields are always written; pointers mark fields that only some
// item or event types have).

type respFakeResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	CreatedAt         int64              `json:"created_at"`
	Status            string             `json:"status"`
	Error             *respFakeErrorBody `json:"error"`
	IncompleteDetails *respFakeReason    `json:"incomplete_details"`
	Instructions      *string            `json:"instructions"`
	Metadata          map[string]string  `json:"metadata"`
	Model             string             `json:"model"`
	Output            []respFakeItem     `json:"output"`
	ParallelToolCalls bool               `json:"parallel_tool_calls"`
	Temperature       float64            `json:"temperature"`
	ToolChoice        string             `json:"tool_choice"`
	Tools             []any              `json:"tools"`
	TopP              float64            `json:"top_p"`
	Usage             *respFakeUsage     `json:"usage,omitempty"` // the API sends null; the schema wants it absent
}

type respFakeErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type respFakeReason struct {
	Reason string `json:"reason"`
}

type respFakeUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type respFakeItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status,omitempty"`
	// message
	Role    string          `json:"role,omitempty"`
	Content *[]respFakePart `json:"content,omitempty"`
	// function_call
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	// reasoning
	Summary          *[]respFakePart `json:"summary,omitempty"`
	EncryptedContent *string         `json:"encrypted_content,omitempty"`
}

// respFakePart is an output_text, refusal or summary_text part.
type respFakePart struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	Refusal     *string `json:"refusal,omitempty"`
	Annotations *[]any  `json:"annotations,omitempty"`
	Logprobs    *[]any  `json:"logprobs,omitempty"`
}

func respFakeTextPart(text string) respFakePart {
	return respFakePart{Type: "output_text", Text: &text, Annotations: &[]any{}, Logprobs: &[]any{}}
}

type respFakeEvent struct {
	Type           string            `json:"type"`
	SequenceNumber int               `json:"sequence_number"`
	Response       *respFakeResponse `json:"response,omitempty"`
	OutputIndex    *int              `json:"output_index,omitempty"`
	ItemID         string            `json:"item_id,omitempty"`
	ContentIndex   *int              `json:"content_index,omitempty"`
	SummaryIndex   *int              `json:"summary_index,omitempty"`
	Item           *respFakeItem     `json:"item,omitempty"`
	Part           *respFakePart     `json:"part,omitempty"`
	Delta          *string           `json:"delta,omitempty"`
	Text           *string           `json:"text,omitempty"`
	Refusal        *string           `json:"refusal,omitempty"`
	Name           string            `json:"name,omitempty"`
	Arguments      *string           `json:"arguments,omitempty"`
	Logprobs       *[]any            `json:"logprobs,omitempty"`
}

// respFakeErrorEvent is the "error" event.
type respFakeErrorEvent struct {
	Type           string  `json:"type"`
	SequenceNumber int     `json:"sequence_number"`
	Code           string  `json:"code"`
	Message        string  `json:"message"`
	Param          *string `json:"param"`
}

// respFakeBuild renders a turn as a complete response object.
func respFakeBuild(t ResponsesTurn, seq int, model string, encrypted bool, inputBytes int) *respFakeResponse {
	r := &respFakeResponse{
		ID: t.ID, Object: "response", CreatedAt: time.Now().Unix(), Status: "completed",
		Metadata: map[string]string{}, Model: t.Model, Output: make([]respFakeItem, len(t.Items)),
		ParallelToolCalls: true, Temperature: 1, ToolChoice: "auto", Tools: []any{}, TopP: 1,
	}
	if r.ID == "" {
		r.ID = fmt.Sprintf("resp_%d", seq)
	}
	if r.Model == "" {
		r.Model = model
	}
	var out []string
	for i, it := range t.Items {
		w := respFakeItem{ID: it.ID, Type: it.Type, Status: "completed"}
		switch it.Type {
		case "message":
			if w.ID == "" {
				w.ID = fmt.Sprintf("msg_%d_%d", seq, i)
			}
			w.Role = "assistant"
			text := it.Text
			part := respFakeTextPart(text)
			if it.Refusal {
				part = respFakePart{Type: "refusal", Refusal: &text}
			}
			w.Content = &[]respFakePart{part}
			out = append(out, text)
		case "function_call":
			if w.ID == "" {
				w.ID = fmt.Sprintf("fc_%d_%d", seq, i)
			}
			w.CallID = it.CallID
			if w.CallID == "" {
				w.CallID = fmt.Sprintf("call_%d_%d", seq, i)
			}
			w.Name = it.Name
			args := it.Arguments
			w.Arguments = &args
			out = append(out, it.Name, args)
		case "reasoning":
			if w.ID == "" {
				w.ID = fmt.Sprintf("rs_%d_%d", seq, i)
			}
			w.Status = ""
			summary := make([]respFakePart, len(it.Summary))
			for j := range it.Summary {
				summary[j] = respFakePart{Type: "summary_text", Text: &it.Summary[j]}
			}
			w.Summary = &summary
			if encrypted {
				enc := it.EncryptedContent
				w.EncryptedContent = &enc
			}
		}
		r.Output[i] = w
	}
	u := t.Usage
	if u == (ResponsesUsage{}) {
		u = ResponsesUsage(EstimateUsage(inputBytes, out...))
	}
	r.Usage = &respFakeUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	r.Usage.InputTokensDetails.CachedTokens = u.CachedTokens
	r.Usage.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	switch {
	case t.Fail != nil:
		r.Status = "failed"
		r.Error = &respFakeErrorBody{Code: t.Fail.Code, Message: t.Fail.Message}
		r.Usage = nil
	case t.Incomplete != "":
		r.Status = "incomplete"
		r.IncompleteDetails = &respFakeReason{Reason: t.Incomplete}
	}
	return r
}

// respFakeStream writes a response as the API's event stream.
func respFakeStream(w *sseWriter, final *respFakeResponse, chunk int) {
	seq := 0
	send := func(typ string, ev any) bool {
		data, _ := json.Marshal(ev)
		seq++
		return w.event(typ, data)
	}
	event := func(ev *respFakeEvent) bool {
		ev.SequenceNumber = seq
		return send(ev.Type, ev)
	}
	start := *final
	start.Status, start.Output, start.Usage, start.Error, start.IncompleteDetails = "in_progress", []respFakeItem{}, nil, nil, nil
	if !event(&respFakeEvent{Type: "response.created", Response: &start}) ||
		!event(&respFakeEvent{Type: "response.in_progress", Response: &start}) {
		return
	}
	zero := 0
	for i := range final.Output {
		idx := i
		done := final.Output[i]
		added := done
		added.Status = "in_progress"
		switch done.Type {
		case "message":
			added.Content = &[]respFakePart{}
		case "function_call":
			empty := ""
			added.Arguments = &empty
		case "reasoning":
			added.Summary = &[]respFakePart{}
		}
		if !event(&respFakeEvent{Type: "response.output_item.added", OutputIndex: &idx, Item: &added}) {
			return
		}
		switch done.Type {
		case "message":
			p := (*done.Content)[0]
			startPart := respFakeTextPart("")
			deltaType, doneType, full := "response.output_text.delta", "response.output_text.done", p.Text
			var logprobs *[]any
			if p.Type == "refusal" {
				empty := ""
				startPart = respFakePart{Type: "refusal", Refusal: &empty}
				deltaType, doneType, full = "response.refusal.delta", "response.refusal.done", p.Refusal
			} else {
				logprobs = &[]any{}
			}
			if !event(&respFakeEvent{Type: "response.content_part.added", OutputIndex: &idx, ItemID: done.ID, ContentIndex: &zero, Part: &startPart}) {
				return
			}
			for _, c := range chunks(*full, chunk) {
				if !event(&respFakeEvent{Type: deltaType, OutputIndex: &idx, ItemID: done.ID, ContentIndex: &zero, Delta: &c, Logprobs: logprobs}) {
					return
				}
			}
			ev := &respFakeEvent{Type: doneType, OutputIndex: &idx, ItemID: done.ID, ContentIndex: &zero, Logprobs: logprobs}
			if p.Type == "refusal" {
				ev.Refusal = full
			} else {
				ev.Text = full
			}
			if !event(ev) || !event(&respFakeEvent{Type: "response.content_part.done", OutputIndex: &idx, ItemID: done.ID, ContentIndex: &zero, Part: &p}) {
				return
			}
		case "function_call":
			for _, c := range chunks(*done.Arguments, chunk) {
				if !event(&respFakeEvent{Type: "response.function_call_arguments.delta", OutputIndex: &idx, ItemID: done.ID, Delta: &c}) {
					return
				}
			}
			if !event(&respFakeEvent{Type: "response.function_call_arguments.done", OutputIndex: &idx, ItemID: done.ID, Name: done.Name, Arguments: done.Arguments}) {
				return
			}
		case "reasoning":
			for j, part := range *done.Summary {
				si := j
				empty := ""
				if !event(&respFakeEvent{Type: "response.reasoning_summary_part.added", OutputIndex: &idx, ItemID: done.ID, SummaryIndex: &si, Part: &respFakePart{Type: "summary_text", Text: &empty}}) {
					return
				}
				for _, c := range chunks(*part.Text, chunk) {
					if !event(&respFakeEvent{Type: "response.reasoning_summary_text.delta", OutputIndex: &idx, ItemID: done.ID, SummaryIndex: &si, Delta: &c}) {
						return
					}
				}
				if !event(&respFakeEvent{Type: "response.reasoning_summary_text.done", OutputIndex: &idx, ItemID: done.ID, SummaryIndex: &si, Text: part.Text}) ||
					!event(&respFakeEvent{Type: "response.reasoning_summary_part.done", OutputIndex: &idx, ItemID: done.ID, SummaryIndex: &si, Part: &part}) {
					return
				}
			}
		}
		if !event(&respFakeEvent{Type: "response.output_item.done", OutputIndex: &idx, Item: &done}) {
			return
		}
	}
	switch final.Status {
	case "failed":
		if !send("error", &respFakeErrorEvent{Type: "error", SequenceNumber: seq, Code: final.Error.Code, Message: final.Error.Message}) {
			return
		}
		event(&respFakeEvent{Type: "response.failed", Response: final})
	case "incomplete":
		event(&respFakeEvent{Type: "response.incomplete", Response: final})
	default:
		event(&respFakeEvent{Type: "response.completed", Response: final})
	}
}
