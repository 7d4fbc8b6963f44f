package runlettest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/runlet/runlet"
)

// GeminiServer is a fake Gemini API on loopback:
// POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse. It answers scripted responses in order,
// as JSON or as the API's event stream (one GenerateContentResponse per
// event, the finish reason on the last); records every request; and
// injects faults (InjectFault). Point the adapter at it with
// gemini.Config{BaseURL: srv.BaseURL()}.
//
// Like the real API it answers with the google.rpc.Status envelope
// {"error":{"code","message","status"}}: 404 for other paths, 401 when
// RequireAPIKey was set and neither x-goog-api-key nor ?key= matches, 400
// for a body without contents. For Gemini 3 and later models (any model
// not named gemini-1… or gemini-2…) it signs the first function call of
// each response and enforces the API's rule: a request whose model turn
// has function calls must carry a thought signature on the first one,
// one the server issued (byte for byte) or the documented placeholder
// "skip_thought_signature_validator"; else 400.
type GeminiServer struct {
	*httptest.Server
	wire
	script[GeminiResponse]

	// ChunkSize splits streamed text and thoughts into chunks of at most
	// this many runes, for responses that set none; zero means
	// DefaultChunkSize and negative one chunk per part. Set it before the
	// first request.
	ChunkSize int

	sigMu  sync.Mutex
	issued map[string]bool // signatures sent out
}

// GeminiResponse is one scripted answer.
type GeminiResponse struct {
	// ID (responseId) and Model (modelVersion) default to
	// "resp_runlettest_N" and the request's model.
	ID, Model string
	Parts     []GeminiPart
	// FinishReason defaults to "STOP"; FinishMessage goes with it.
	FinishReason, FinishMessage string
	// BlockReason, when set, answers with a blocked prompt
	// (promptFeedback.blockReason) and no candidate.
	BlockReason string
	// Usage is reported as given; nil reports EstimateUsage.
	Usage *GeminiUsage
	// ChunkSize overrides the server's ChunkSize for this response.
	ChunkSize int
	// Error, when set, is the answer instead: for a non-streaming request an
	// HTTP error in the google.rpc.Status envelope (Error.Code, when set, is
	// its status, such as "RESOURCE_EXHAUSTED"); for a stream an error
	// event after ErrorAfter events on an HTTP 200 stream.
	Error      *WireError
	ErrorAfter int
	// Body, when set, is sent verbatim instead (as text/event-stream when
	// the request streams, else as JSON): a recorded response to replay.
	Body []byte
}

// GeminiPart is one part of a scripted answer: text, a thought (Thought
// set), or a function call (Call set). Signature is its thoughtSignature.
type GeminiPart struct {
	Text      string
	Thought   bool
	Call      *GeminiFunctionCall
	Signature string
}

// GeminiFunctionCall is a scripted function call; Args is a JSON object
// (empty means none), ID is optional as in the API.
type GeminiFunctionCall struct {
	ID, Name, Args string
}

// GeminiUsage is a scripted answer's usageMetadata.
type GeminiUsage struct {
	PromptTokens, CandidatesTokens, ThoughtsTokens, CachedTokens int
}

// GeminiText returns a text part.
func GeminiText(text string) GeminiPart { return GeminiPart{Text: text} }

// GeminiThought returns a thought part (a thought summary) with its signature.
func GeminiThought(text, signature string) GeminiPart {
	return GeminiPart{Text: text, Thought: true, Signature: signature}
}

// GeminiCall returns a function call part.
func GeminiCall(id, name, args string) GeminiPart {
	return GeminiPart{Call: &GeminiFunctionCall{ID: id, Name: name, Args: args}}
}

// SkipThoughtSignature is the placeholder signature the Gemini API accepts
// for a function call whose real signature is unknown.
const SkipThoughtSignature = "skip_thought_signature_validator"

var _ WireServer = (*GeminiServer)(nil)

// NewGeminiServer starts a fake Gemini API that answers the given responses
// in order. The caller must Close it.
func NewGeminiServer(responses ...GeminiResponse) *GeminiServer {
	s := &GeminiServer{script: script[GeminiResponse]{queue: responses, fromReply: geminiFromReply}, issued: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the root to configure the adapter with
// (gemini.Config.BaseURL): the server's URL + "/v1beta".
func (s *GeminiServer) BaseURL() string { return s.URL + "/v1beta" }

// Enqueue appends responses to the script.
func (s *GeminiServer) Enqueue(responses ...GeminiResponse) { s.enqueue(responses) }

// SetResponder sets a function that answers requests once the scripted
// responses are used up. Without one, such requests get an HTTP error.
func (s *GeminiServer) SetResponder(f func(WireRequest) GeminiResponse) { s.setResponder(f) }

// geminiFromReply renders a provider-neutral reply.
func geminiFromReply(w WireReply) GeminiResponse {
	r := GeminiResponse{ID: w.ID, Model: w.Model, Error: w.Error, ErrorAfter: w.ErrorAfter, Body: w.Body}
	if w.Reasoning != "" || w.ReasoningSignature != "" {
		r.Parts = append(r.Parts, GeminiThought(w.Reasoning, w.ReasoningSignature))
	}
	switch {
	case w.Refusal != "": // the API has no refusal: the model says so in text
		r.Parts = append(r.Parts, GeminiText(w.Refusal))
	case w.Text != "" || len(w.ToolCalls) == 0:
		r.Parts = append(r.Parts, GeminiText(w.Text))
	}
	for _, c := range w.ToolCalls {
		r.Parts = append(r.Parts, GeminiCall(c.ID, c.Name, c.Arguments))
	}
	switch w.Finish {
	case runlet.FinishLength:
		r.FinishReason = "MAX_TOKENS"
	case runlet.FinishContentFilter, runlet.FinishRefusal:
		r.FinishReason = "SAFETY"
	case "", runlet.FinishStop, runlet.FinishToolCalls:
	default:
		r.FinishReason = strings.ToUpper(string(w.Finish))
	}
	if u := w.Usage; u != nil {
		r.Usage = &GeminiUsage{PromptTokens: u.InputTokens, CandidatesTokens: u.OutputTokens - u.ReasoningTokens,
			ThoughtsTokens: u.ReasoningTokens, CachedTokens: u.CachedTokens}
	}
	return r
}

func (s *GeminiServer) serve(rw http.ResponseWriter, r *http.Request) {
	req, fault := s.record(r)
	if writeStatusFault(rw, fault) {
		return
	}
	model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	stream := method == "streamGenerateContent"
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") || !ok || model == "" ||
		(method != "generateContent" && !stream) {
		writeGeminiError(rw, &WireError{Status: 404, Message: "Requested entity was not found."})
		return
	}
	if key := s.requiredKey(); key != "" && r.Header.Get("X-Goog-Api-Key") != key && r.URL.Query().Get("key") != key {
		writeGeminiError(rw, &WireError{Status: 401, Code: "UNAUTHENTICATED", Message: "API key not valid. Please pass a valid API key."})
		return
	}
	if stream && r.URL.Query().Get("alt") != "sse" {
		writeGeminiError(rw, &WireError{Status: 400, Message: "runlettest: only alt=sse streams are served"})
		return
	}
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionCall     *json.RawMessage `json:"functionCall"`
				ThoughtSignature string           `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		writeGeminiError(rw, &WireError{Status: 400, Message: "Invalid JSON payload received. " + err.Error()})
		return
	}
	if len(body.Contents) == 0 {
		writeGeminiError(rw, &WireError{Status: 400, Message: "* GenerateContentRequest.contents: contents is not specified"})
		return
	}
	signing := !strings.HasPrefix(model, "gemini-1") && !strings.HasPrefix(model, "gemini-2")
	if signing {
		for i, c := range body.Contents {
			for _, p := range c.Parts {
				if p.FunctionCall == nil {
					continue
				}
				if !s.knownSignature(p.ThoughtSignature) {
					msg := "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly."
					if p.ThoughtSignature != "" {
						msg = "Corrupted thought signature."
					}
					writeGeminiError(rw, &WireError{Status: 400, Message: msg + " (content " + strconv.Itoa(i) + ")"})
					return
				}
				break // only the first call of a turn is signed
			}
		}
	}

	if fault != nil && fault.Reset && !stream {
		resetConn(rw)
		return
	}
	resp, n, ok := s.next(req)
	if !ok {
		writeGeminiError(rw, &WireError{Status: 500, Message: "runlettest: no scripted response left"})
		return
	}
	if resp.ID == "" {
		resp.ID = "resp_runlettest_" + strconv.Itoa(n)
	}
	if resp.Model == "" {
		resp.Model = model
	}
	resp.ChunkSize = chunkSize(s.ChunkSize, resp.ChunkSize)
	resp.Parts = slices.Clone(resp.Parts)
	var output, thoughts []string
	signed := false
	for i, p := range resp.Parts {
		if p.Call != nil && !signed && signing {
			signed = true
			if p.Signature == "" {
				// Signatures are opaque base64; '+' and '/' catch a client that re-encodes them.
				resp.Parts[i].Signature = base64.StdEncoding.EncodeToString([]byte("runlettest sig " + strconv.Itoa(n) + "/" + strconv.Itoa(i) + "\xfb\xff"))
			}
		}
		if sig := resp.Parts[i].Signature; sig != "" {
			s.issue(sig)
		}
		if p.Thought {
			thoughts = append(thoughts, p.Text)
		} else {
			output = append(output, p.Text)
		}
		if p.Call != nil {
			output = append(output, p.Call.Name, p.Call.Args)
		}
	}
	if resp.Usage == nil {
		// As the API counts: thoughts apart from the candidates.
		e := EstimateUsage(len(req.Body), output...)
		resp.Usage = &GeminiUsage{PromptTokens: e.InputTokens, CandidatesTokens: e.OutputTokens}
		if len(thoughts) > 0 {
			resp.Usage.ThoughtsTokens = max(1, estimateTokens(thoughts...))
		}
	}
	if resp.Body != nil {
		if stream {
			rw.Header().Set("Content-Type", "text/event-stream")
		} else {
			rw.Header().Set("Content-Type", "application/json; charset=UTF-8")
		}
		_, _ = rw.Write(resp.Body)
		return
	}
	if stream {
		resp.stream(rw, fault)
		return
	}
	if resp.Error != nil {
		writeGeminiError(rw, resp.Error)
		return
	}
	parts := make([]geminiPartJSON, 0, len(resp.Parts))
	for _, p := range resp.Parts {
		parts = append(parts, p.json(p.Text))
	}
	out, _ := json.Marshal(resp.chunk(parts, true))
	rw.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if fault != nil && fault.Truncate {
		out = out[:len(out)/2]
	} else {
		rw.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(out)
}

func (s *GeminiServer) issue(sig string) {
	s.sigMu.Lock()
	defer s.sigMu.Unlock()
	s.issued[sig] = true
}

func (s *GeminiServer) knownSignature(sig string) bool {
	if sig == SkipThoughtSignature || sig == "context_engineering_is_the_way_to_go" {
		return true
	}
	s.sigMu.Lock()
	defer s.sigMu.Unlock()
	return s.issued[sig]
}

type geminiPartJSON struct {
	Text             *string         `json:"text,omitempty"`
	Thought          bool            `json:"thought,omitempty"`
	FunctionCall     json.RawMessage `json:"functionCall,omitempty"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`
}

// json renders the part with the given text (a chunk of it when streaming).
func (p GeminiPart) json(text string) geminiPartJSON {
	if p.Call != nil {
		args := json.RawMessage(p.Call.Args)
		if p.Call.Args == "" {
			args = nil
		}
		fc, _ := json.Marshal(struct {
			ID   string          `json:"id,omitempty"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args,omitempty"`
		}{p.Call.ID, p.Call.Name, args})
		return geminiPartJSON{FunctionCall: fc, ThoughtSignature: p.Signature}
	}
	return geminiPartJSON{Text: &text, Thought: p.Thought, ThoughtSignature: p.Signature}
}

type geminiChunkJSON struct {
	Candidates     []geminiCandidateJSON `json:"candidates,omitempty"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback,omitempty"`
	UsageMetadata map[string]int `json:"usageMetadata"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

type geminiCandidateJSON struct {
	Content struct {
		Parts []geminiPartJSON `json:"parts"`
		Role  string           `json:"role"`
	} `json:"content"`
	FinishReason  string `json:"finishReason,omitempty"`
	FinishMessage string `json:"finishMessage,omitempty"`
	Index         int    `json:"index"`
}

// chunk is one GenerateContentResponse with the given parts; last adds
// the finish reason.
func (r GeminiResponse) chunk(parts []geminiPartJSON, last bool) geminiChunkJSON {
	u := r.Usage
	c := geminiChunkJSON{ModelVersion: r.Model, ResponseID: r.ID, UsageMetadata: map[string]int{
		"promptTokenCount": u.PromptTokens, "candidatesTokenCount": u.CandidatesTokens,
		"totalTokenCount": u.PromptTokens + u.CandidatesTokens + u.ThoughtsTokens,
	}}
	if u.ThoughtsTokens > 0 {
		c.UsageMetadata["thoughtsTokenCount"] = u.ThoughtsTokens
	}
	if u.CachedTokens > 0 {
		c.UsageMetadata["cachedContentTokenCount"] = u.CachedTokens
	}
	if r.BlockReason != "" {
		c.PromptFeedback = &struct {
			BlockReason string `json:"blockReason"`
		}{r.BlockReason}
		return c
	}
	cand := geminiCandidateJSON{}
	cand.Content.Parts, cand.Content.Role = parts, "model"
	if last {
		cand.FinishReason, cand.FinishMessage = r.FinishReason, r.FinishMessage
		if cand.FinishReason == "" {
			cand.FinishReason = "STOP"
		}
	}
	c.Candidates = []geminiCandidateJSON{cand}
	return c
}

// stream writes the response as Gemini 3 streams it: text and thoughts in
// chunks, a text part's signature on an empty trailing text part, a
// thought's on its last chunk, function calls whole, and the finish reason
// on a last chunk with an empty text part.
func (r GeminiResponse) stream(rw http.ResponseWriter, f *Fault) {
	w := newSSEWriter(rw, f)
	emit := func(parts []geminiPartJSON, last bool) bool {
		if r.Error != nil && w.events >= r.ErrorAfter {
			w.event("", geminiErrorBody(r.Error))
			return false
		}
		data, _ := json.Marshal(r.chunk(parts, last))
		return w.event("", data)
	}
	if r.BlockReason == "" {
		for _, p := range r.Parts {
			if p.Call != nil {
				if !emit([]geminiPartJSON{p.json("")}, false) {
					return
				}
				continue
			}
			pieces := chunks(p.Text, r.ChunkSize)
			for i, piece := range pieces {
				jp := p.json(piece)
				if !p.Thought || i < len(pieces)-1 {
					jp.ThoughtSignature = ""
				}
				if !emit([]geminiPartJSON{jp}, false) {
					return
				}
			}
			if p.Signature != "" && (!p.Thought || len(pieces) == 0) {
				if !emit([]geminiPartJSON{{Text: new(string), Thought: p.Thought, ThoughtSignature: p.Signature}}, false) {
					return
				}
			}
		}
	}
	if r.Error != nil { // an error due after more events than the answer has ends it
		w.event("", geminiErrorBody(r.Error))
		return
	}
	emit([]geminiPartJSON{{Text: new(string)}}, true)
}

// geminiStatus is the google.rpc.Code name for an HTTP status.
func geminiStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

func geminiErrorBody(e *WireError) []byte {
	status := e.Code
	if status == "" {
		status = geminiStatus(e.status())
	}
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"code": e.status(), "message": e.Message, "status": status}})
	return out
}

func writeGeminiError(rw http.ResponseWriter, e *WireError) {
	rw.Header().Set("Content-Type", "application/json; charset=UTF-8")
	rw.WriteHeader(e.status())
	_, _ = rw.Write(geminiErrorBody(e))
}
