package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/sse"
)

// ChatCompletions is a runlet.Model for the Chat Completions API
// (POST {BaseURL}/chat/completions), the API that OpenAI and nearly every
// OpenAI-compatible server speak: Ollama, vLLM, llama.cpp server, DeepSeek,
// Qwen/DashScope, OpenRouter, Groq, Together, Azure and more. It is safe for
// concurrent use.
//
// # Request
//
// ModelRequest.Instructions become the first message, with role "system"
// (or the role named by the "instructions_role" option, such as
// "developer"). User messages carry text, images (ImagePart: by URL, or
// inline bytes as a data: URL) and files (FilePart with inline data: audio
// (wav, mp3) as input_audio, anything else as a file part with a data: URL;
// the API takes no file URLs). Assistant messages carry their text as
// content and their tool calls as tool_calls; tool results (ToolResultPart)
// become "tool" messages, which take text only: a result's images, files
// and audio (ToolResultPart.Parts) go in one user message after the
// turn's last tool message, each tool message saying its attachments
// follow (audio as input_audio, wav and mp3 only; other audio is
// ErrInvalidRequest). Tools are sent as functions with their JSON
// Schema; ToolChoice maps to "auto", "none", "required" or a named
// function; OutputSchema becomes response_format {"type": "json_schema"},
// strict when the schema can be made strict (see ChatCompletions.OutputMode
// for the rules).
//
// Settings map to temperature, top_p, stop and an output token limit. The
// limit goes in "max_completion_tokens" when talking to OpenAI itself
// (Config.Name "openai" and the api.openai.com base URL): OpenAI deprecated
// "max_tokens" and rejects it for reasoning models. Everywhere else it goes
// in "max_tokens", the field every compatible server understands (several,
// such as DeepSeek and DashScope, document only that one). The
// "max_tokens_field" option chooses explicitly. Settings.Reasoning.Effort
// becomes "reasoning_effort" (a "reasoning_effort" option wins); the API
// has no thinking budget and returns no reasoning summaries, so
// BudgetTokens and Summary are not sent. Of the presets, OpenAI, Ollama,
// OpenRouter and DeepSeek (which runs "medium" as "high") document
// "reasoning_effort" for their reasoning models; llama.cpp documents only
// "none", not a level Runlet sends; for vLLM and DashScope it is sent and
// left to the server (DashScope's Qwen models take an "enable_thinking"
// option instead).
//
// Streaming requests set "stream": true and
// "stream_options": {"include_usage": true}, so the last chunk reports
// usage.
//
// # Request options
//
// ModelRequest.Options keys the adapter interprets (they are not sent):
//
//   - "model" (string): the model for this request, overriding Config.Model.
//   - "strict" (bool): mark every function tool "strict": true (structured
//     outputs for tool arguments; the schemas must then list every property
//     as required and set additionalProperties to false).
//   - "max_tokens_field" (string): "max_tokens" or "max_completion_tokens";
//     see above.
//   - "send_reasoning" (bool or string): send earlier reasoning back; see
//     Reasoning below. A string names the message field ("reasoning_content"
//     or "reasoning"); true means "reasoning_content".
//   - "think_tags" (bool): split "<think>…</think>" at the start of the
//     content into reasoning; see Reasoning below.
//   - "instructions_role" (string): "system" (the default) or "developer".
//
// Documented keys of the API passed through as given include
// "reasoning_effort", "parallel_tool_calls", "seed", "user", "metadata",
// "service_tier", "logit_bias", "frequency_penalty", "presence_penalty",
// "prediction", "verbosity", "safety_identifier" and "prompt_cache_key".
// Every other key, known or not (a new API field, or a compatible server's
// extension such as "top_k" or "enable_thinking"), is copied into the
// request body unchanged, replacing what the adapter generated for the same
// key; a nil value removes the key. "messages" and "stream" belong to the
// adapter and cannot be set.
//
// # Response
//
// Only choice 0 is used: with the "n" option above 1 the other choices are
// ignored (ask for one choice; n>1 is billed in full). Content becomes a
// TextPart and tool_calls become ToolCallParts (arguments exactly as
// received; a call without an ID gets "call_<index>"). A refusal (the
// "refusal" field) is also returned as a TextPart, so it reaches the user,
// and the finish reason is runlet.FinishRefusal. finish_reason maps to
// stop, length, tool_calls (also for the legacy function_call, and when a
// server says "stop" but returned tool calls), content_filter, or other.
// Usage maps prompt, completion and total tokens, reasoning tokens
// (completion_tokens_details) and cached input tokens
// (prompt_tokens_details, or DeepSeek's prompt_cache_hit_tokens). The
// response ID and model are kept.
//
// # Hosted web search and citations
//
// A runlet.HostedWebSearch in ModelRequest.HostedTools becomes
// "web_search_options" (its Options as the object, {} without any; only the
// search models take it). The API has no other hosted tool: code
// execution and URL fetch are an ErrInvalidRequest (the Responses API has
// code execution). A HostedTool Declaration whose Provider is this
// adapter's name (a preset's, such as "openrouter" with
// {"type": "openrouter:web_search"}) is sent in "tools" before the
// function tools; another provider's is left out. The message's
// url_citation annotations (and a stream's delta.annotations, which
// OpenRouter sends) become Citations of the answer's TextPart, the
// character indexes turned into byte offsets (none, as OpenRouter sends:
// the whole text); usage.server_tool_use_details.web_search_requests
// (OpenRouter) is Usage.WebSearchRequests. Annotations do not go back (an
// assistant message of the request has none), and another provider's
// HostedToolPart in the history is sent as assistant text (its Text()).
//
// # Reasoning
//
// Compatible servers stream their reasoning in "reasoning_content"
// (DeepSeek, Qwen, GLM, vLLM) or "reasoning" (Ollama, OpenRouter, Groq);
// both become runlet.ReasoningPart with Provider set to Config.Name. OpenAI
// itself never returns reasoning text in this API (only a token count).
//
// Some models (DeepSeek-R1 on many hosts, QwQ) write their reasoning inline
// as "<think>…</think>" at the start of the content instead. Splitting that
// is opt-in with the "think_tags" option, because it rewrites content: the
// adapter cannot tell a model that thinks in tags from an answer that merely
// starts with the text "<think>", and the user knows which model they chose.
// With the option, a "<think>" at the start of the content (after optional
// whitespace) opens a reasoning part that ends at "</think>"; tags split
// across deltas are recognised; a think block that never closes is all
// reasoning.
//
// Earlier reasoning is sent back (as the assistant message's
// "reasoning_content", or "reasoning") only to servers that want it — the
// SendReasoning of the preset named by Config.Name (DeepSeek), or the
// "send_reasoning" option — and
// only reasoning parts whose Provider is this adapter's Config.Name:
// reasoning from another provider is never sent. Everywhere else it is
// dropped, since OpenAI and most servers reject or ignore the field.
//
// OpenRouter and other servers also return "reasoning_details", an array
// of entries ("reasoning.text" with text and signature,
// "reasoning.summary", "reasoning.encrypted" with data); streamed
// fragments are merged by index. The array is kept on the ReasoningPart
// (Details) and sent back unchanged as the assistant message's
// "reasoning_details" whenever the part's Provider is this adapter's
// Config.Name, since those servers ask for it; the text and summary of the
// entries become reasoning text when the server sends no plain reasoning.
//
// # Streaming and errors
//
// Deltas are yielded as they arrive: text, reasoning, and tool-call
// fragments grouped by the server's index (parallel calls may interleave;
// arguments may be split anywhere, even inside a UTF-8 sequence or a JSON
// surrogate pair). A stream is complete when it ends with "data: [DONE]"
// after choice 0's finish_reason, or, without [DONE], when the finish_reason
// and the usage chunk (the last thing a server sends) have both arrived.
// A stream that ends any other way — cut off, truncated, or reset — is a
// *runlet.ProviderError wrapping runlet.ErrStreamIncomplete, never a
// successful response with partial text. An error object inside the stream
// ("event: error", or a chunk with an "error" field, as Groq and OpenRouter
// send) is a *runlet.ProviderError with the server's type, code and
// message, retryable when its type or status code says so. A chunk that is
// not valid JSON is a *runlet.ProviderError wrapping runlet.ErrMalformedStream.
//
// Non-2xx responses are *runlet.ProviderError values (status, type, code,
// message; a plain-text summary for HTML bodies from proxies), retried with
// backoff per Config.MaxRetries when retryable, honouring Retry-After and
// retry-after-ms. A stream is retried only until its first delta reached the
// caller: deltas are never replayed. Cancelling ctx, or
// breaking out of the stream loop, closes the connection. The API key never
// appears in an error.
type ChatCompletions struct {
	r   resolved
	url string
	// defaults derived from the configuration
	sendReasoning  string // message field for earlier reasoning; "" sends none
	maxTokensField string
}

// NewChatCompletions returns a Chat Completions adapter. Connection settings
// (API key, base URL, model, HTTP client, headers, retries, name) come from
// cfg; see Config and the presets.
func NewChatCompletions(cfg Config) *ChatCompletions {
	r := cfg.resolve()
	m := &ChatCompletions{r: r, url: httpc.JoinURL(r.baseURL, "/chat/completions"), maxTokensField: "max_tokens"}
	if p, ok := Presets[r.name]; ok && p.SendReasoning {
		m.sendReasoning = "reasoning_content"
	}
	if u, err := url.Parse(r.baseURL); err == nil && r.name == "openai" && u.Host == "api.openai.com" {
		m.maxTokensField = "max_completion_tokens"
	}
	return m
}

var _ runlet.Model = (*ChatCompletions)(nil)

// Generate sends one non-streaming request and returns the whole response.
// A body that fails to read or decode in a way a retry may cure (cut
// halfway, or a 200 holding an overload error) is retried like a failed
// request.
func (m *ChatCompletions) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	b, err := m.buildRequest(req, false)
	if err != nil {
		return nil, err
	}
	return m.r.client.Generate(ctx, httpc.Call{URL: m.url, Body: b.body, Model: b.model}, func(resp *http.Response) (*runlet.ModelResponse, error) {
		return m.decodeResponse(resp, b.thinkTags)
	})
}

func (m *ChatCompletions) decodeResponse(resp *http.Response, thinkTags bool) (*runlet.ModelResponse, error) {
	body, err := m.r.client.ReadAll(resp, 2*m.r.limit)
	if err != nil {
		return nil, err
	}
	// choices[].message.tool_calls[] are 5 containers deep.
	if err := m.r.client.CheckBody(resp, body, 5, m.r.limit); err != nil {
		return nil, err
	}
	out, err := chatDecodeCompletion(m.r.name, body, thinkTags)
	if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, m.r.client.DecodeError(resp, body, syn)
		}
		var pe *runlet.ProviderError
		if errors.As(err, &pe) && pe.RequestID == "" {
			pe.RequestID = httpc.RequestID(resp.Header)
		}
		return nil, err
	}
	return out, nil
}

// Stream sends one streaming request and yields text, reasoning and
// tool-call deltas as they arrive, then a StreamDone event with the
// assembled response. Breaking out of the loop closes the connection. A
// stream that fails before its first delta reached the caller is retried
// like a failed request (Config.MaxRetries); after that its error is final.
func (m *ChatCompletions) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
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
func (m *ChatCompletions) readStream(ctx context.Context, resp *http.Response, b chatBuilt, emit func(runlet.StreamEvent) bool) error {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/html" {
		// A proxy's page (a login or error page) with status 200.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return &runlet.ProviderError{Provider: m.r.name, Message: "unexpected HTML response: " + httpc.ErrorFromBody(m.r.name, body).Message,
			RequestID: httpc.RequestID(resp.Header), Err: runlet.ErrMalformedStream}
	}
	if mt == "application/json" {
		// A server that ignored "stream": true and answered in one piece
		// (or sent an error object with status 200).
		out, err := m.decodeResponse(resp, b.thinkTags)
		if err != nil {
			return err
		}
		httpc.EmitResponse(out, emit)
		return nil
	}

	d := newChatDecoder(m.r.name, b.thinkTags, m.r.limit)
	d.requestID = httpc.RequestID(resp.Header)
	rd := httpc.NewSSEReader(resp.Body, m.r.limit)
	defer rd.Release()
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return d.readError(err)
		}
		if err := d.feed(ev); err != nil {
			return err
		}
		if ctx.Err() != nil {
			// Buffered data must not outlive a cancellation.
			return ctx.Err()
		}
		for _, e := range d.events {
			if !emit(e) {
				return nil
			}
		}
		if d.done {
			break
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	out, err := d.finish()
	if err != nil {
		return err
	}
	for _, e := range d.events {
		if !emit(e) {
			return nil
		}
	}
	emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: out})
	return nil
}

// readError wraps a failure to read the stream.
func (d *chatDecoder) readError(err error) error {
	if errors.Is(err, sse.ErrEventTooLarge) {
		return httpc.EventTooLarge(d.provider, d.requestID, d.size.Limit(), err)
	}
	return &runlet.ProviderError{Provider: d.provider, Message: "stream interrupted", Retryable: true, RequestID: d.requestID,
		Err: fmt.Errorf("%w: %w", runlet.ErrStreamIncomplete, err)}
}
