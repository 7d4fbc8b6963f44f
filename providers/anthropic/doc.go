// Package anthropic is the Runlet adapter for the Anthropic Messages API
// (POST /v1/messages).
//
//	model := anthropic.NewMessages(anthropic.Config{Model: "claude-sonnet-4-5"})
//	agent := &runlet.Agent{Name: "assistant", Model: model}
//
// The API key comes from Config.APIKey or $ANTHROPIC_API_KEY and is sent as
// x-api-key; it never appears in errors (even when a server echoes it back).
// The base URL comes from Config.BaseURL, $ANTHROPIC_BASE_URL or
// https://api.anthropic.com. The anthropic-version header is DefaultVersion
// ("2023-06-01") unless Config.Version says otherwise; see Config.Version
// for what changes with "2026-10-21".
//
// Claude on Google Vertex AI speaks the same API through rawPredict and
// streamRawPredict: Config.Vertex puts the model in the URL and
// "anthropic_version": VertexVersion in the body, and Config.Token sends an
// access token that refreshes instead of a key (package
// github.com/runlet/runlet/cloud/vertex fills both from Application
// Default Credentials):
//
//	model := anthropic.NewMessages(anthropic.Config{Model: "claude-sonnet-4-5@20250929",
//		Vertex: &anthropic.Vertex{Project: "my-project", Location: "us-east5"}, Token: tokens})
//
// # Requests
//
// ModelRequest.Instructions become "system". Messages become the API's
// user/assistant messages: RoleTool messages are user messages of
// tool_result blocks (is_error set from ToolResultPart.IsError; a result
// with images or files has them as its content blocks, text, image and
// document, as below; audio, which the API does not take, is
// ErrInvalidRequest there and in user messages), consecutive
// messages with the same API role are merged, and tool_result blocks come
// first in their user message. Text parts are text blocks (empty ones are
// dropped); image parts are image blocks (inline bytes and data: URLs as
// base64, other URLs by reference); file parts are document blocks (PDF and
// other binary types as base64, text/* as a plain-text source, URLs by
// reference; the part's Name is the title). Tool calls are tool_use blocks
// whose input is the call's JSON arguments, or {} when they are not a JSON
// object. Tool call IDs made by other providers are made acceptable to the
// API by replacing characters outside [A-Za-z0-9_-] with '_'.
//
// Reasoning parts made by this adapter (ReasoningPart.Provider equal to
// Config.Name) go back unchanged: with a Signature as a thinking block
// {"thinking", "signature"}, with only Encrypted as a redacted_thinking
// block {"data"}. Reasoning made by another provider, or without a
// signature or data, is dropped. This keeps extended thinking working
// across tool calls.
//
// A tool call whose arguments a person edited when approving it
// (runlet.ApproveWithArguments; ToolCallPart.OriginalArguments is set) is a
// tool_use block with the arguments that ran, never the model's, and the
// thinking block before it still goes back unchanged: its signature
// verifies that block, not the tool_use input after it, and the API
// requires the thinking of the current tool-use cycle, so it is kept
// rather than dropped. The thinking may still speak of the arguments the
// model first proposed; the tool_use and its result say what ran.
//
// Tools are sent with input_schema (an empty object schema when a tool has
// none). ToolChoice maps to tool_choice auto, any (ToolChoiceRequired),
// tool (with name) or none. Settings map to max_tokens, temperature, top_p
// and stop_sequences. max_tokens is always sent: the "max_tokens" option,
// else Settings.MaxOutputTokens, else Config.MaxTokens, else
// DefaultMaxTokens (4096). Settings.Reasoning maps to extended thinking:
// BudgetTokens to thinking {"type":"enabled","budget_tokens":N} (at least
// 1024; Opus 4.7 and later refuse a budget), else an Effort to adaptive
// thinking {"type":"adaptive"}; Summary adds "display":"summarized" to it
// (newer models omit the thinking text otherwise); Effort also becomes
// output_config.effort. Adaptive thinking and the effort are for Claude
// 4.6 and later (and for a model name that is not a Claude name, such as
// a proxy's alias): for an earlier model the effort is not sent, and an
// effort without a budget is refused before anything is sent
// (ErrInvalidRequest, naming BudgetTokens). A "thinking" option, or an
// "effort" in the "output_config" option, wins.
// An OutputSchema becomes output_config.format
// {"type":"json_schema","schema":...}, the schema fitted to the API's limits
// (see Messages.OutputMode for the models and schemas that use it; the
// others get the run's output tool instead).
//
// # Options
//
// ModelRequest.Options are request-level settings. These keys are
// interpreted:
//
//	model                      string; overrides Config.Model
//	max_tokens                 integer; overrides Settings.MaxOutputTokens
//	thinking                   an integer budget N means {"type":"enabled","budget_tokens":N}
//	                           (0 means off); a string is the type ("adaptive");
//	                           an object is sent as given. When max_tokens is
//	                           the built-in default and the budget reaches it,
//	                           max_tokens becomes budget + DefaultMaxTokens.
//	cache_control              prompt caching: true means {"type":"ephemeral"},
//	                           a string is a TTL ("5m", "1h"), an object is used
//	                           as given. It is placed as a breakpoint on the
//	                           system prompt, the last tool and the last block of
//	                           the last message (three of the API's four).
//	betas                      list of strings; added to the anthropic-beta header
//	disable_parallel_tool_use  bool; set on tool_choice (auto when none is set)
//	output_config              object; merged with the OutputSchema's format
//
// Every other key is copied into the body as given, replacing a field the
// adapter wrote (a nil value removes it): top_k, stop_sequences, metadata
// ({"user_id": ...}), service_tier, temperature, and any field a newer API
// version adds. The key "stream" is reserved.
//
// # Responses
//
// Text blocks become TextParts (one per non-empty block), tool_use blocks
// ToolCallParts (Arguments is the input JSON, {} when empty; in a stream,
// the input_json_delta fragments joined as received, so input cut off by
// max_tokens stays as it came, with FinishReason length), thinking
// blocks ReasoningParts with Text, Signature and Provider, and
// redacted_thinking blocks ReasoningParts with Encrypted and Provider.
// Unknown block types are skipped; text around them is kept. Server tools
// are described below. Stop reasons
// map as end_turn and stop_sequence → stop, tool_use → tool_calls,
// max_tokens (and model_context_window_exceeded) → length, pause_turn →
// pause, refusal → refusal, anything else → other. The runtime continues a
// paused turn: it sends the paused response back as it is (its
// server_tool_use and result blocks byte-exact) as the last message of the
// next request, which is a model call of its own (a turn and a request
// against the run's limits).
//
// Usage: Anthropic's input_tokens excludes prompt-cache reads and writes,
// while runlet.Usage.InputTokens counts the whole prompt, so InputTokens is
// input_tokens + cache_read_input_tokens + cache_creation_input_tokens;
// CachedInputTokens is cache_read_input_tokens and CacheWriteTokens is
// cache_creation_input_tokens (both included in InputTokens). In a stream,
// message_start gives the first counts and message_delta's cumulative
// counts replace them. ReasoningTokens is
// usage.output_tokens_details.thinking_tokens (included in output_tokens),
// which newer models report, streamed or not; zero when absent.
//
// # Streaming
//
// Stream decodes message_start, content_block_start/delta/stop (text_delta,
// input_json_delta, thinking_delta, signature_delta, citations_delta),
// message_delta, message_stop, ping and error events, and skips
// unknown events and blocks. Tool-call deltas carry an Index counting the
// response's tool_use blocks from 0; their argument fragments may split the
// JSON anywhere. An error event becomes a *runlet.ProviderError (an
// overloaded_error is Retryable), and a stream that ends without
// message_stop a *runlet.ProviderError wrapping runlet.ErrStreamIncomplete.
// Malformed events give a *runlet.ProviderError wrapping runlet.ErrMalformedStream.
// A server that answers a stream request with a JSON message (a gateway
// that ignores "stream") is handled: the message is yielded as one delta
// per part; likewise Generate assembles an event stream sent in answer to
// a non-streaming request.
//
// # Retries
//
// Failed requests (408, 409, 429, 5xx including 529 overloaded, connection
// errors) are retried up to Config.MaxRetries times with exponential backoff
// and jitter, honouring Retry-After. A stream that fails before its first
// delta reached the caller counts as a failed request; once a delta has
// been yielded the error is returned instead.
//
// # Server tools and citations
//
// ModelRequest.HostedTools declares Anthropic's server tools in "tools",
// before the function tools: runlet.HostedWebSearch as {"type":"web_search_20250305","name":"web_search"},
// runlet.HostedCodeExecution as code_execution_20250825 (adding the
// code-execution-2025-08-25 beta) and runlet.HostedWebFetch as
// web_fetch_20250910 (adding web-fetch-2025-09-10), each with the
// HostedTool's Options merged in (max_uses, allowed_domains,
// blocked_domains, user_location, ...). A Declaration whose Provider is
// this adapter's name is sent as given; another provider's is left out;
// an unknown kind is an ErrInvalidRequest.
//
// In a response, a server_tool_use (or mcp_tool_use) block and the
// *_tool_result block answering it become one runlet.HostedToolPart: ID,
// Name and Input from the call; Sources from web_search_result and
// web_fetch_result content; Output from a code execution's stdout and
// stderr (IsError for a non-zero return code) or an error's error_code
// (IsError); Raw is the two blocks as received (in a stream, the call
// block with the input its deltas carried). Names map to kinds: web_search,
// web_fetch, and code_execution, bash_code_execution and
// text_editor_code_execution. A text block's citations (and a stream's
// citations_delta) become TextPart.Citations, each with its URL, title,
// cited_text and the whole citation object in Raw; Anthropic cites whole
// blocks, so Start and End are zero. usage.server_tool_use.web_search_requests
// is Usage.WebSearchRequests.
//
// On the next turn a HostedToolPart this adapter made goes back as its Raw
// blocks, unchanged (the encrypted_content of search results included),
// and a text part's web_search_result_location citations with it (their
// encrypted_index included); other citation kinds are dropped, as is every
// citation of another provider. Another provider's HostedToolPart, or one
// whose Raw is not a list of JSON objects, is sent as a text block of its
// Text().
package anthropic
