package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"mime"
	"net/http"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/jsonscan"
)

// Responses is a runlet.Model for the OpenAI Responses API
// (POST {BaseURL}/responses), the API OpenAI steers new work to, with
// first-class reasoning items. It is safe for concurrent use.
//
// Tool results become function_call_output items: their text, or, for a
// result with images or files (runlet.ToolResultPart.Parts), the array of
// input_text, input_image and input_file items the API documents for the
// output. The API takes no audio input: an audio part, in a tool result or
// a user message, is runlet.ErrInvalidRequest.
//
// # Conversation state
//
// By default the adapter is stateless: every call sends the full history,
// with "store": false, so OpenAI keeps nothing between calls. Reasoning
// items of earlier turns travel on runlet.ReasoningPart (ID, summary text,
// encrypted content) and are sent back as reasoning input items, so a
// reasoning model keeps its chain of thought across tool calls. For that the
// adapter asks for "include": ["reasoning.encrypted_content"] whenever store
// is false and the request has a "reasoning" option (any value, even an
// empty object) or asks for reasoning through Settings.Reasoning (set
// "include" yourself for a reasoning model used without either).
// Settings.Reasoning becomes "reasoning": {"effort": Effort, "summary":
// "auto" when Summary is set}; the API has no thinking budget, so
// BudgetTokens is not sent; a "reasoning" option replaces the object. Only reasoning produced by this adapter's provider (Config.Name) is
// sent back; foreign reasoning is dropped.
//
// The API accepts a reasoning item only together with the output item that
// followed it. Runlet keeps the function_call item ID on ToolCallPart.ItemID,
// but a text part has no item ID, so a reasoning item is sent back only when
// the next part of the same assistant message is a function call of this
// provider (the case that matters: reasoning kept across a tool call).
// Other reasoning items, and reasoning without encrypted content while store
// is false, are dropped, and the function calls after them go without their
// item ID, which keeps the request valid.
//
// # Chaining with previous_response_id
//
// The "previous_response_id" option switches to server-side state instead:
// the request names the response that produced the last assistant message of
// the history, and only the messages after that assistant message (tool
// results, a new user message) are sent as input. Store then defaults to true,
// so the new response can be chained in turn. The value "auto" makes the
// adapter remember the response that produced each function call and
// reasoning item it returned, and chain automatically when the last
// assistant message of the history holds one of them (the tool loop of a run);
// otherwise, as after a text-only answer, it sends the full history.
//
// A call whose arguments a person edited when approving it
// (runlet.ApproveWithArguments) breaks the chain once: the server's copy of
// the response holds the call as the model proposed it, and the history
// holds the call that ran, so the request after such a call sends the
// whole history (with the edited arguments) and no previous_response_id,
// for "auto" and for an explicit ID alike. Store keeps its chaining
// default, so the response to it can be chained again.
//
// Trade-offs of chaining: requests are smaller and reasoning stays on the
// server without encrypted content, but OpenAI must store every response
// (not possible under zero data retention; stored responses expire), the
// server's copy of the conversation wins over the local history (a
// runlet.Preparer that trims or summarises history no longer shortens what
// the model sees; use "truncation": "auto" instead), earlier input is still
// billed as input tokens, and the chain cannot move to another provider,
// API key or organisation. Instructions are sent with every request, as the
// API does not carry them over.
//
// # Request options
//
// ModelRequest.Options keys the adapter interprets:
//
//   - "model" (string): the model for this request, overriding Config.Model.
//   - "store" (bool): let OpenAI store the response; default false (true when
//     chaining).
//   - "previous_response_id" (string): a response ID to chain from, or "auto";
//     see above.
//   - "include" ([]string): extra output data; "reasoning.encrypted_content"
//     is added when store is false and "reasoning" is set.
//   - "strict" (bool): send function tools with strict schema adherence
//     (every property required, additionalProperties false); default false.
//   - "reasoning" (object): {"effort": "low"|..., "summary": "auto"|"concise"|"detailed"}.
//   - "text" (object): merged into the text parameter, such as
//     {"verbosity": "low"}; ModelRequest.OutputSchema fills text.format
//     (json_schema, strict when the schema can be made strict) unless the
//     option sets it.
//   - "tools" (list of objects): more tools, sent as given after the
//     function tools of ModelRequest.Tools and the hosted tools (below).
//
// The other documented keys of the API, such as "truncation",
// "service_tier", "metadata", "parallel_tool_calls", "max_tool_calls",
// "prompt_cache_key", "safety_identifier" or "user", and any key the API adds
// later, are copied into the request body as given, replacing what the
// adapter generated for the same key; a nil value removes the key. "stream"
// and "input" are the adapter's and cannot be set.
//
// # Settings
//
// Temperature, TopP and MaxOutputTokens map to "temperature", "top_p" and
// "max_output_tokens". The Responses API has no stop sequences: StopSequences
// is ignored (sending "stop" would be rejected).
//
// # Output
//
// A response becomes one assistant message: output_text (and refusal text)
// as TextPart (ItemID the message item ID), function_call items as ToolCallPart (ID is the call_id, ItemID
// the item ID), reasoning items as ReasoningPart (Text is the summary text,
// parts joined by a blank line, or the raw reasoning text when there is no
// summary; Encrypted is encrypted_content; ID the item ID), the items of
// built-in tools as runlet.HostedToolPart (below). Items of other types
// are not translated. The finish reason is
// tool_calls when there are function calls, length or content_filter for an
// incomplete response, refusal for a refusal, and stop otherwise. A failed
// response, an "error" event, or a stream that ends before its terminal event
// is a *runlet.ProviderError (the last wraps runlet.ErrStreamIncomplete).
// The "phase" OpenAI puts on assistant messages of some models
// ("commentary", "final_answer") is not kept. Assistant text that followed a
// replayed reasoning item goes back as that output message, with its item
// ID, so the pair stays valid statelessly; other assistant text goes back as
// a plain assistant message.
//
// # Built-in tools and citations
//
// ModelRequest.HostedTools are declared after the function tools:
// runlet.HostedWebSearch as {"type": "web_search"} and
// runlet.HostedCodeExecution as {"type": "code_interpreter", "container":
// {"type": "auto"}}, each with the HostedTool's Options merged in
// (search_context_size, user_location, filters, container, ...), and
// include gains web_search_call.action.sources and
// code_interpreter_call.outputs so that their items are complete. A
// Declaration whose Provider is this adapter's name is sent as given
// (file_search, image_generation, mcp, ...); another provider's is left
// out. runlet.HostedWebFetch, which the API does not offer, is an
// ErrInvalidRequest.
//
// Output items of OpenAI-run tools (web_search_call, file_search_call,
// code_interpreter_call, image_generation_call, mcp_call, mcp_list_tools)
// become runlet.HostedToolParts, the item as received in Raw: ID is the
// item ID, Name the item type, Input the web search's action, the code or
// the file search's queries, Output the code's logs, Sources the web
// search's sources (with the include above) or the file search's results;
// a failed item IsError. Usage.WebSearchRequests counts the
// web_search_call items. The annotations of output_text (url_citation,
// file_citation, container_file_citation, file_path) become
// TextPart.Citations, the annotation in Raw, the API's character indexes
// turned into byte offsets of the part's text (a file_citation's index is
// a point: Start equals End).
//
// On the next turn this adapter's HostedToolParts go back as their items,
// unchanged, after the reasoning item they followed, and the annotations
// of a text part sent as an output message (the text that followed a
// replayed reasoning item) go back with it. Another provider's
// HostedToolPart is sent as assistant text (its Text()), and its citations
// are dropped.
//
// # Errors and retries
//
// The HTTP layer is the one ChatCompletions uses: non-2xx responses are
// *runlet.ProviderError values (status, type, code, message), retried with
// backoff per Config.MaxRetries when retryable, honouring Retry-After and
// retry-after-ms; a stream is retried only until its first delta reached
// the caller.
// Cancelling ctx, or breaking out of the stream loop, closes the connection.
// The API key never appears in an error.
type Responses struct {
	r     resolved
	url   string
	chain respChain
}

// NewResponses returns a Responses API adapter. Connection settings (API key,
// base URL, model, HTTP client, retries) come from cfg; see Config.
func NewResponses(cfg Config) *Responses {
	r := cfg.resolve()
	return &Responses{r: r, url: httpc.JoinURL(r.baseURL, "/responses")}
}

var _ runlet.Model = (*Responses)(nil)

// Generate sends one non-streaming request and returns the whole response.
// A body that fails to read or decode in a way a retry may cure (cut
// halfway, or a 200 holding an overload error) is retried like a failed
// request.
func (m *Responses) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	b, err := m.buildRequest(req, false)
	if err != nil {
		return nil, err
	}
	out, err := m.r.client.Generate(ctx, httpc.Call{URL: m.url, Body: b.body, Model: b.model}, m.decodeResponse)
	if err != nil {
		return nil, err
	}
	m.remember(b, out)
	return out, nil
}

// Stream sends one streaming request and yields text, reasoning and
// tool-call deltas as they arrive, then a StreamDone event with the assembled
// response. Breaking out of the loop closes the connection. A stream that
// fails before its first delta reached the caller is retried like a failed
// request (Config.MaxRetries); after that its error is final.
func (m *Responses) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		b, err := m.buildRequest(req, true)
		if err != nil {
			yield(runlet.StreamEvent{}, err)
			return
		}
		m.r.client.Stream(ctx, httpc.Call{URL: m.url, Body: b.body, Model: b.model}, yield, func(resp *http.Response, emit func(runlet.StreamEvent) bool) error {
			return m.readStream(ctx, resp, b, emit)
		})
	}
}

// readStream emits the events of one streaming response; it returns nil
// when the stream completed or emit asked to stop.
func (m *Responses) readStream(ctx context.Context, resp *http.Response, b respBuilt, emit func(runlet.StreamEvent) bool) error {
	if isJSON(resp.Header.Get("Content-Type")) {
		// A server that ignored "stream": true and answered in one piece.
		out, err := m.decodeResponse(resp)
		if err != nil {
			return err
		}
		m.remember(b, out)
		httpc.EmitResponse(out, emit)
		return nil
	}
	d := newRespDecoder(m.r.name, resp.Body, m.r.limit)
	d.requestID = httpc.RequestID(resp.Header)
	defer d.r.Release()
	for {
		ev, err := d.next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if ev.Kind == runlet.StreamDone {
			m.remember(b, ev.Response)
		}
		if !emit(ev) || ev.Kind == runlet.StreamDone {
			return nil
		}
	}
}

// decodeResponse reads a non-streamed response body.
func (m *Responses) decodeResponse(resp *http.Response) (*runlet.ModelResponse, error) {
	body, err := m.r.client.ReadAll(resp, 2*m.r.limit)
	if err != nil {
		return nil, err
	}
	// output[].content[] are 4 containers deep.
	if err := m.r.client.CheckBody(resp, body, 4, m.r.limit); err != nil {
		return nil, err
	}
	return m.decodeBody(resp, body, true)
}

// decodeBody decodes a non-streamed response body: with the fast path
// when fast is set (always, but in tests), else with encoding/json.
func (m *Responses) decodeBody(resp *http.Response, body []byte, fast bool) (*runlet.ModelResponse, error) {
	// The fast path (respBodyScan), into storage on the stack.
	var (
		sc    jsonscan.Scanner
		fw    respResponse
		items [8]respOutItem
	)
	if b := (respBodyScan{s: &sc, w: &fw, items: items[:]}); fast && b.scan(body) && fw.Status != "failed" {
		a := respAssembler{provider: m.r.name, quiet: true}
		for i := range items[:b.n] {
			a.addFinal(i, &items[i])
		}
		return a.response(&fw), nil
	}
	// One pass: the response with its output items decoded in place. An
	// item of a type we do not know may not fit respOutItem; then decode
	// again, item by item, skipping what does not fit.
	var typed respTypedResponse
	if json.Unmarshal(body, &typed) == nil && typed.Status != "failed" {
		if typed.Status == "" && typed.Error != nil {
			// Not a response but an error envelope, with status 200.
			e := httpc.ErrorFromBody(m.r.name, body)
			e.StatusCode, e.RequestID = resp.StatusCode, httpc.RequestID(resp.Header)
			return nil, e
		}
		a := respAssembler{provider: m.r.name, quiet: true}
		for i := range typed.Output {
			a.addFinal(i, &typed.Output[i])
		}
		return a.response(&typed.respResponse), nil
	}
	var w respResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, m.r.client.DecodeError(resp, body, err)
	}
	out, err := m.convertResponse(&w)
	if err != nil {
		var pe *runlet.ProviderError
		if errors.As(err, &pe) && pe.RequestID == "" {
			pe.RequestID = httpc.RequestID(resp.Header)
		}
		return nil, err
	}
	return out, nil
}

// respTypedResponse is a response whose output items decode in the same
// pass (the outer Output shadows respResponse's raw one).
type respTypedResponse struct {
	respResponse
	Output []respOutItem `json:"output"`
}

// convertResponse turns a non-streamed response body into a ModelResponse.
func (m *Responses) convertResponse(w *respResponse) (*runlet.ModelResponse, error) {
	if w.Status == "failed" {
		return nil, respFailedError(m.r.name, w.Error, "")
	}
	a := respAssembler{provider: m.r.name, quiet: true}
	for i, raw := range w.Output {
		if err := respDecodeItem(raw, &a.item); err != nil {
			return nil, &runlet.ProviderError{Provider: m.r.name, Message: "malformed output item",
				Err: fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)}
		}
		a.addFinal(i, &a.item)
	}
	return a.response(w), nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}
