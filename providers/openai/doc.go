// Package openai provides runlet.Model adapters for OpenAI's two text APIs,
// written on net/http (no SDK):
//
//   - ChatCompletions (POST {BaseURL}/chat/completions), the API spoken by
//     OpenAI and by nearly every OpenAI-compatible server: Ollama, vLLM,
//     llama.cpp server, DeepSeek, Qwen/DashScope, OpenRouter, Groq,
//     Together, Azure and more;
//   - Responses (POST {BaseURL}/responses), the API OpenAI steers new work
//     to, with first-class reasoning items.
//
// Both take the same connection-level Config: API key (default
// $OPENAI_API_KEY), base URL (default $OPENAI_BASE_URL, else
// DefaultBaseURL), model, *http.Client, extra headers, organization and
// project, retries, and a Name that labels errors and reasoning state.
// Everything request-level — temperature, reasoning effort, tool choice —
// travels in runlet.ModelRequest, with provider-specific keys in its
// Options map (documented on each adapter; unknown keys pass into the
// request body unchanged, so a new API field needs no release).
//
//	model := openai.NewChatCompletions(openai.Config{Model: "gpt-4o-mini"})
//
// For a compatible server, start from its preset, which sets the base URL,
// the key's environment variable and the adapter's name:
//
//	model := openai.NewChatCompletions(openai.Ollama.Config("qwen3"))
//	model := openai.NewChatCompletions(openai.DeepSeek.Config("deepseek-reasoner"))
//
// Presets: OpenAI, Ollama (localhost:11434, no key needed), VLLM
// (localhost:8000), LlamaCpp (localhost:8080), DeepSeek ($DEEPSEEK_API_KEY;
// earlier reasoning is sent back as reasoning_content, empty on an
// assistant message with tool calls when there is none, as its thinking
// mode requires), DashScope for Qwen ($DASHSCOPE_API_KEY), OpenRouter
// ($OPENROUTER_API_KEY), GeminiOpenAI (Gemini's compatible endpoint,
// $GEMINI_API_KEY) and Azure (Azure OpenAI: $AZURE_OPENAI_API_KEY in the
// api-key header; the base URL from Config.BaseURL or
// $AZURE_OPENAI_ENDPOINT, a resource's endpoint becoming its v1 root; the
// model is the deployment's name):
//
//	cfg := openai.Azure.Config("my-gpt-4o")
//	cfg.BaseURL = "https://my-resource.openai.azure.com" // or .../openai/deployments/my-gpt-4o?api-version=2024-10-21
//	model := openai.NewChatCompletions(cfg)             // or openai.NewResponses(cfg), on the v1 API
//
// AzureBaseURL builds the older, versioned URLs from an endpoint, a
// deployment and an api-version, for Chat Completions
// (/openai/deployments/{deployment}/chat/completions?api-version=) and
// Responses (/openai/responses?api-version=). For Entra ID instead of a
// key, set Config.Token to a source of tokens for AzureScope: they go as
// "Authorization: Bearer" and no api-key is sent (package
// github.com/runlet/runlet/cloud/azure makes one from the Azure identity
// library's credential chain).
//
// A base URL's query (Azure's api-version) is kept on every request, after
// the endpoint's path. Any other compatible server works with
// Config.BaseURL (or $OPENAI_BASE_URL) alone.
//
// Gemini's compatible endpoint
// (https://generativelanguage.googleapis.com/v1beta/openai) attaches a
// thought signature to each tool call
// (tool_calls[].extra_content.google.thought_signature). The Chat adapter
// keeps it on the runlet.ToolCallPart (Signature, with Provider set to the
// adapter's Name) and sends it back unchanged on that call, only to an
// adapter of the same Name: Gemini 3 answers 400 without it. A call whose
// arguments a person edited on approval (runlet.ApproveWithArguments) is
// sent with the arguments that ran and, in place of its signature, the
// placeholder "skip_thought_signature_validator" that Gemini documents for
// calls it did not generate (see providers/gemini). For Gemini
// itself, providers/gemini speaks the native API.
//
// Failures are *runlet.ProviderError values with the HTTP status, the
// provider's error type and code, and whether a retry may help. Requests
// are retried with exponential backoff and jitter on 408, 409, 429, 5xx and
// connection errors, honouring Retry-After and retry-after-ms, up to
// Config.MaxRetries. A stream that fails before its first delta reached the
// caller is retried the same way; once a delta reached the caller it never
// is, so deltas are never replayed. A stream that ends early wraps
// runlet.ErrStreamIncomplete; data that is not what the API defines wraps
// runlet.ErrMalformedStream. The API key never appears in an error.
//
// runlettest.NewOpenAIChatServer and runlettest.NewOpenAIResponsesServer
// are fake servers for both APIs, for tests that run these adapters end to
// end on loopback.
package openai
