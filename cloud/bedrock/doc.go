// Package bedrock is the Runlet adapter for Amazon Bedrock's Converse and
// ConverseStream APIs (POST /model/{modelId}/converse and
// /converse-stream), which speak one wire format for every Bedrock model
// family that takes messages: Anthropic Claude, Amazon Nova, Meta Llama,
// Mistral, DeepSeek, OpenAI's open-weight models, and others.
//
//	model, err := bedrock.New(ctx, bedrock.Config{Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0"})
//	agent := &runlet.Agent{Name: "assistant", Model: model}
//
// The request and response JSON are the adapter's own (like the other
// adapters in providers/); the AWS SDK for Go v2 does what must be done
// exactly as AWS does it: the credential chain (config.LoadDefaultConfig),
// SigV4 signing (aws/signer/v4) and the binary event-stream framing of
// ConverseStream (aws/protocol/eventstream). The package lives in the
// nested module github.com/runlet/runlet/cloud, so a program that does
// not use it links no AWS code.
//
// # Credentials and Region
//
// Requests are signed with SigV4 for the service "bedrock" in the
// configured Region, each attempt afresh, by a transport around
// Config.HTTPClient. Credentials come from Config.Credentials or the AWS
// SDK's default chain: environment variables (AWS_ACCESS_KEY_ID, ...),
// the shared config and credentials files (profiles, SSO, assume-role,
// credential processes; Config.Profile or $AWS_PROFILE), web identity,
// and the container (ECS, EKS Pod Identity) and instance (EC2 IMDS)
// roles. They are cached and refreshed before they expire. The Region
// comes from Config.Region, $AWS_REGION, $AWS_DEFAULT_REGION or the
// profile. A Bedrock API key (Config.APIKey or $AWS_BEARER_TOKEN_BEDROCK)
// is sent as a bearer token instead of a signature. A request that cannot
// be signed fails with a *runlet.ProviderError wrapping a
// *CredentialError that names the sources tried. Only requests to the
// configured endpoint are signed (a redirect elsewhere goes unsigned),
// never over plain HTTP off loopback unless Config.AllowInsecureHTTP, and
// no secret access key, session token or API key appears in an error.
//
// # Requests
//
// Instructions become "system". Messages become user and assistant
// messages (tool results are user messages; consecutive messages with
// the same role are merged; tool results come first in their message;
// blank text is dropped, as the API refuses it). Tool calls are toolUse
// blocks, tool results toolResult blocks with a text content and, for an
// error, "status": "error" (only the Claude and Nova models take the
// status, so a success sends none); a result with parts
// (ToolResultPart.Parts) has them as its content blocks in order: text,
// images and documents, audio as a note (a tool result takes none). Tool
// call IDs made by other providers
// are fitted to the API's [a-zA-Z0-9_-]{1,64}. Images are image blocks
// (png, jpeg, gif, webp) and files document blocks (pdf, csv, doc, docx,
// xls, xlsx, html, txt, md; the name fitted to the API's rules), both
// from bytes, a data: URL or an s3:// URI: Bedrock fetches no https URL,
// so one is refused before sending (ErrInvalidRequest).
//
// Reasoning made by this adapter (ReasoningPart.Provider equal to
// Config.Name) goes back unchanged: with a Signature as
// reasoningContent.reasoningText {text, signature}, with Encrypted as
// reasoningContent.redactedContent. Other reasoning is dropped.
// Converse runs no provider tools: a runlet.HostedTool is an
// ErrInvalidRequest (another provider's Declaration is left out), and
// another provider's HostedToolPart in the history is sent as a text
// block of its Text(); citations are not sent.
//
// Tools are toolConfig.tools[].toolSpec with inputSchema.json.
// ToolChoice maps to toolChoice auto (the default, not sent), any
// (required) and tool (a named tool). Converse has no "none": the tools
// are left out, unless the conversation holds tool calls or results,
// which the API accepts only with a toolConfig; then the tools are sent
// and the model chooses. Settings map to inferenceConfig (maxTokens,
// temperature, topP, stopSequences). Settings.Reasoning goes into
// additionalModelRequestFields in each family's own terms, as recorded
// Bedrock traffic shows them accepted: for Claude, BudgetTokens is
// thinking {"type":"enabled","budget_tokens":N} (with maxTokens budget +
// 4096 when none is set), else Effort is thinking {"type":"adaptive"}
// with output_config {"effort":...} (Claude 4.6 and later); for Amazon
// Nova, Effort is reasoningConfig {"type":"enabled","maxReasoningEffort":...};
// for OpenAI's models reasoning_effort, for Qwen reasoning_config. Other
// families get neither, and Summary is not sent (Claude on Bedrock
// returns its thinking as it is). A field the additionalModelRequestFields
// option sets wins. An OutputSchema becomes outputConfig.textFormat
// {"type":"json_schema","structure":{"jsonSchema":{"schema": the schema
// as a JSON string, "name"}}}; Model.OutputMode asks runs for the output
// tool instead, which every model that takes tools supports.
//
// # Options
//
// ModelRequest.Options keys the adapter interprets:
//
//	model                         string: the modelId for this request
//	cache_point                   prompt caching: true is {"type":"default"}, a string
//	                              its TTL ("5m", "1h"), an object the block as given;
//	                              a cachePoint goes after the system prompt, the tools
//	                              and the last message's content
//	additionalModelRequestFields  object: merged with the adapter's (thinking, top_k, ...)
//	outputConfig                  object: merged with the adapter's (effort, textFormat)
//
// Every other key is set on the body as given (a nil value removes a
// field): guardrailConfig, requestMetadata, performanceConfig,
// serviceTier, promptVariables, additionalModelResponseFieldPaths,
// toolConfig to replace the adapter's, and any field a newer API adds.
//
// # Responses
//
// Text blocks become TextParts, toolUse blocks ToolCallParts, and
// reasoningContent blocks ReasoningParts (reasoningText's text and
// signature in Text and Signature, redactedContent's base64 in
// Encrypted, Provider set to Config.Name). Server tool blocks
// (server_tool_use and their results), citations, images and guard
// content are skipped. Stop reasons: end_turn and stop_sequence are
// FinishStop (FinishToolCalls with tool calls), tool_use FinishToolCalls,
// max_tokens and model_context_window_exceeded FinishLength,
// guardrail_intervened and content_filtered FinishContentFilter, anything
// else FinishOther.
//
// Usage: Bedrock's inputTokens excludes prompt-cache reads and writes
// (its totalTokens adds them), while runlet.Usage.InputTokens counts the
// whole prompt, so InputTokens is inputTokens + cacheReadInputTokens +
// cacheWriteInputTokens; CachedInputTokens is cacheReadInputTokens and
// CacheWriteTokens cacheWriteInputTokens.
//
// What a response carries beside (the guardrail trace, metrics,
// additionalModelResponseFields, the raw stop reason) is handed unchanged
// to Config.OnResponse as a ResponseInfo.
//
// # Streaming
//
// ConverseStream answers with an AWS event stream
// (application/vnd.amazon.eventstream), decoded by the AWS SDK's
// eventstream decoder, which checks both CRCs of each message; a message
// whose prelude announces more than MaxResponseBytes, or more than 8 KiB
// of headers, is refused before it is read. messageStart, contentBlockStart/Delta/Stop, messageStop and
// metadata events are read (unknown events are skipped); the stream is
// complete after messageStop and metadata. One that ends before
// messageStop is a retryable *runlet.ProviderError wrapping
// runlet.ErrStreamIncomplete; a corrupt message one wrapping
// runlet.ErrMalformedStream.
//
// # Errors and retries
//
// Errors become *runlet.ProviderError with Code set to the exception
// (from the X-Amzn-ErrorType header of an HTTP error, or the
// :exception-type of an exception inside the stream: ThrottlingException,
// ModelNotReadyException, ServiceUnavailableException,
// ValidationException, ...) and the body's message. ThrottlingException,
// ModelNotReadyException, ServiceUnavailableException,
// InternalServerException, ModelTimeoutException and
// ModelStreamErrorException are retried (Config.MaxRetries) with
// exponential backoff, as are 408, 409, 429, 5xx and connection errors,
// like every adapter; validation, access, quota and signature errors are
// not. A stream is retried only before its first delta reached the
// caller.
//
// Package bedrocktest is a fake Bedrock on loopback that verifies SigV4
// signatures, for tests and offline examples.
package bedrock
