// Package gemini is the runlet adapter for the Google Gemini API
// (generateContent and streamGenerateContent?alt=sse), written on net/http
// without an SDK. It also reaches Gemini on Google Vertex AI, regional or
// global, with an access token that refreshes (Config.Vertex and
// Config.Token; package github.com/runlet/runlet/cloud/vertex fills both
// from Application Default Credentials):
//
//	model := gemini.New(gemini.Config{Model: "gemini-2.5-flash"}) // key from $GEMINI_API_KEY
//	onVertex := gemini.New(gemini.Config{Model: "gemini-2.5-flash",
//		Vertex: &gemini.Vertex{Project: "my-project", Location: "global"}, Token: tokens})
//
// # Requests
//
// Instructions become systemInstruction. User and tool messages become
// "user" contents, assistant messages "model" contents; consecutive
// messages with the same role are merged. Images and files given as bytes
// or data: URLs go inline (inlineData); other URLs go by reference
// (fileData: a Files API URI, gs:// on Vertex AI, an https or YouTube URL).
// Tool results become functionResponse parts, {"output": content} or, for an
// error result, {"error": content}, carrying the call's ID and name. A
// result's images and files (ToolResultPart.Parts) go inline inside its
// functionResponse as "parts" for Gemini 3 models (multimodal function
// responses); for earlier models, and for media by URL and audio, they go
// as parts of their own after the turn's function responses. Audio parts
// go as inlineData or fileData like images.
//
// Tool input schemas are sent whole as parametersJsonSchema, and an
// OutputSchema as responseJsonSchema with responseMimeType
// "application/json": nothing is dropped or converted to the older OpenAPI
// subset (parameters / responseSchema). A model that cannot take JSON Schema
// can be given the subset through the "tools" or "generationConfig" options.
//
// ToolChoice maps to toolConfig.functionCallingConfig: auto AUTO, none NONE,
// required ANY, a named tool ANY with allowedFunctionNames. Settings map to
// generationConfig (temperature, topP, maxOutputTokens, stopSequences).
// Settings.Reasoning maps to generationConfig.thinkingConfig: BudgetTokens
// to thinkingBudget (Gemini 2.5), else Effort to thinkingLevel (Gemini 3;
// the API refuses both in one request), Summary to includeThoughts. The
// thinking_budget and thinking_level options keep both neutral values
// out; include_thoughts wins over Summary.
//
// Options the adapter interprets:
//
//	"model"             string: the model for this request
//	"thinking_budget"   integer: thinkingConfig.thinkingBudget (0 off, -1 dynamic)
//	"thinking_level"    string: thinkingConfig.thinkingLevel ("low", "high", ...)
//	"include_thoughts"  bool: thinkingConfig.includeThoughts (thought summaries)
//	"generationConfig"  object: merged key by key into generationConfig (topK, seed, ...)
//
// Every other option is set on the request body as given: "safetySettings",
// "cachedContent", "labels", or "tools" and "toolConfig" to replace the
// adapter's.
//
// # Responses
//
// Text parts become runlet.TextPart, thought parts (thought: true)
// runlet.ReasoningPart, function calls runlet.ToolCallPart (with Gemini's
// call ID when it gives one). Only the first candidate is read. Usage:
// InputTokens is promptTokenCount (+ toolUsePromptTokenCount),
// OutputTokens candidatesTokenCount + thoughtsTokenCount, ReasoningTokens
// thoughtsTokenCount, CachedInputTokens cachedContentTokenCount. The
// response ID is responseId and Model is modelVersion.
//
// Finish reasons: STOP is FinishStop (FinishToolCalls with function
// calls), MAX_TOKENS FinishLength, and a blocked answer (SAFETY,
// RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, ...) or a
// blocked prompt (promptFeedback.blockReason) FinishContentFilter. A
// MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL or TOO_MANY_TOOL_CALLS ends
// in a retryable *runlet.ProviderError wrapping ErrMalformedFunctionCall,
// never in an empty success.
//
// # Thought signatures
//
// Gemini attaches an opaque thoughtSignature to parts (function calls,
// text, thoughts) and, for Gemini 3, rejects a later request whose
// function calls lost it. The adapter keeps each signature on the part
// that carried it (ToolCallPart.Signature, TextPart.Signature,
// ReasoningPart.Signature, with Provider set to Config.Name) and sends it
// back unchanged, byte for byte, on the same part, only to an adapter of
// the same Name. In a stream a signature that arrives on an empty text part
// belongs to the text before it. A model turn whose first function call has
// no signature (history from another provider) gets the placeholder
// "skip_thought_signature_validator" that the API documents, except for
// Gemini 1.x and 2.x models.
//
// A function call whose arguments a person edited when approving it
// (runlet.ApproveWithArguments; ToolCallPart.OriginalArguments is set) is
// sent with the arguments that ran, never the model's, and without its
// signature: the signature stands for the model's reasoning up to the call
// it made, and the API documents neither that a signature tolerates
// changed arguments nor how it would reject them, while it documents the
// placeholder for function calls it did not generate. So an edited first
// call of a step carries the placeholder (Gemini 3 and later), the
// reasoning of that step is not carried over, and the request is valid.
//
// # Built-in tools and grounding
//
// ModelRequest.HostedTools are declared in "tools" after the function
// declarations, one Tool each: runlet.HostedWebSearch as {"googleSearch":
// {}}, runlet.HostedCodeExecution as {"codeExecution": {}} and
// runlet.HostedWebFetch as {"urlContext": {}}, the HostedTool's Options as
// the object. A Declaration whose Provider is this adapter's name (such as
// {"fileSearch": {...}}) is sent as given; another provider's is left out;
// an unknown kind is an ErrInvalidRequest.
//
// An executableCode part and the codeExecutionResult part after it become
// one runlet.HostedToolPart (Kind code_execution; Input the executableCode
// object; Output the result's output; IsError for an outcome other than
// OUTCOME_OK), the two parts as received, thought signature included, in
// Raw; they go back to Gemini unchanged. A candidate's groundingMetadata
// becomes a HostedToolPart for the search (Kind web_search, Name
// google_search, Input {"queries": webSearchQueries}, Sources the
// grounding chunks) and its urlContextMetadata one for the URLs fetched
// (Kind web_fetch, Sources the URLs; a failed retrieval in Output), both
// before the answer's text; each grounding support becomes a Citation of
// the text part its segment is in (Start and End in bytes, as the API
// counts them; found by the segment's text when the offsets do not fit).
// Usage.WebSearchRequests is the number of webSearchQueries. Gemini takes
// no grounding back: those parts have no Raw and are not sent, and
// citations are not sent. Another provider's HostedToolPart is sent as a
// text part of its Text().
//
// # Errors and retries
//
// Errors in the google.rpc.Status envelope (also wrapped in an array, and
// inside a stream) become *runlet.ProviderError with Code set to the
// status ("RESOURCE_EXHAUSTED", ...). 408, 409, 429 and 5xx are retried
// (Config.MaxRetries) with exponential backoff, or after the delay of a
// google.rpc.RetryInfo detail or a Retry-After header. The API key never
// appears in errors.
//
// A stream has no terminal event: it is complete when it ends after a chunk
// with a finish reason; one that ends before is runlet.ErrStreamIncomplete.
package gemini
