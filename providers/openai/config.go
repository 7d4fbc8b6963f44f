package openai

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
)

// DefaultBaseURL is OpenAI's API root.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config is the connection-level configuration shared by the Chat
// Completions and Responses adapters. Everything request-level (temperature,
// reasoning effort, ...) goes in runlet.ModelRequest instead.
type Config struct {
	// APIKey is sent as a bearer token. Empty means $OPENAI_API_KEY (or the
	// preset's variable); a server that needs no key (Ollama, a local vLLM)
	// gets no Authorization header.
	APIKey string
	// BaseURL is the API root, such as "http://localhost:11434/v1". Empty
	// means $OPENAI_BASE_URL, else DefaultBaseURL.
	BaseURL string
	// Model is the model name sent with every request, such as "gpt-4o-mini".
	// A request option "model" overrides it per request.
	Model string
	// HTTPClient sends the requests; nil means http.DefaultClient. Deadlines
	// come from the context, so it needs no Timeout.
	HTTPClient *http.Client `json:"-"`
	// Headers are added to every request. They are treated as credentials:
	// never in errors or printed values, dropped on a redirect to another
	// scheme, host or port, and never sent over plain HTTP off loopback
	// (see AllowInsecureHTTP).
	Headers http.Header
	// AllowInsecureHTTP lets the key and Headers go over plain http:// to
	// a host that is not loopback (127.0.0.0/8, ::1, localhost); without
	// it such a request fails with a *runlet.ProviderError wrapping
	// runlet.ErrInvalidRequest, as does a redirect that would take them
	// there. Local servers need nothing. The config file's key is
	// allow_insecure_http.
	AllowInsecureHTTP bool
	// Token, when set, is asked for the bearer token of every request (each
	// attempt), sent as "Authorization: Bearer TOKEN": an access token that
	// expires, such as Vertex AI's from Application Default Credentials or
	// Azure's from Entra ID (the nested module github.com/runlet/runlet/cloud
	// makes these). It must cache and refresh its token itself. It replaces
	// APIKey (no key is read from the environment either). Its tokens are
	// credentials like Headers: never in errors, dropped on a redirect to
	// another origin, never sent over plain HTTP off loopback. An error it
	// returns fails the call with a *runlet.ProviderError wrapping it, so it
	// should say which credential source it tried.
	Token func(ctx context.Context) (string, error) `json:"-"`
	// Organization and Project set OpenAI-Organization and OpenAI-Project.
	Organization, Project string
	// MaxRetries bounds retries of failed requests (408, 409, 429, 5xx,
	// connection errors). Zero means 2; negative means none.
	MaxRetries int
	// MaxResponseBytes limits the text, reasoning and tool arguments one
	// response may accumulate; past it the call fails with a
	// *runlet.ProviderError wrapping runlet.ErrResponseTooLarge. A
	// non-streamed body may be twice as large (JSON escaping), one stream
	// event as large; both are counted after decompression (gzip), and a
	// body or event that goes on past its bound is refused having cost
	// about that bound in memory. Every part (text, reasoning, tool call,
	// content block) counts 512 bytes besides its own, as that is about
	// what it costs in memory however small it is: a response of many tiny
	// parts is refused before it grows the heap past a few times the
	// limit (64 MiB holds 131,072 parts). Zero means 64 MiB.
	MaxResponseBytes int64
	// StreamIdleTimeout bounds how long a stream may go without a byte
	// from the server, its response headers included: past it the call
	// fails with a retryable *runlet.ProviderError wrapping
	// runlet.ErrStreamIncomplete (retried if nothing reached the caller
	// yet). Zero means 10 minutes; negative, no bound (the context's
	// deadline only).
	StreamIdleTimeout time.Duration
	// Name labels errors and continuation state, such as "deepseek".
	// Empty means "openai". Presets set it.
	Name string
	// APIKeyHeader is the header that carries APIKey as it is, such as
	// "api-key" (Azure OpenAI). Empty means "Authorization: Bearer KEY".
	APIKeyHeader string
	// keyEnv is the preset's API key variable; baseEnv and rootPath its
	// base URL variable and root path (see Preset).
	keyEnv, baseEnv, rootPath string
}

// Preset describes an OpenAI-compatible server.
type Preset struct {
	Name      string // short name, such as "ollama"
	BaseURL   string // default base URL
	APIKeyEnv string // environment variable holding the key ("" if none is needed)
	// APIKeyHeader is the header the key goes in (Config.APIKeyHeader);
	// empty means Authorization: Bearer.
	APIKeyHeader string
	// BaseURLEnv names the environment variable holding the base URL of a
	// server that has no fixed one (Azure: AZURE_OPENAI_ENDPOINT). With
	// neither Config.BaseURL nor the variable set, every call fails with
	// a *runlet.ProviderError wrapping runlet.ErrInvalidRequest that says
	// so: the key is never sent to another server.
	BaseURLEnv string
	// RootPath is appended to a base URL that has no path, such as
	// "/openai/v1" for Azure: a resource's endpoint
	// (https://RESOURCE.openai.azure.com) is enough.
	RootPath string
	// SendReasoning reports whether the server wants earlier reasoning
	// (reasoning_content) sent back in assistant messages.
	SendReasoning bool
}

// Presets for common OpenAI-compatible servers. Each base URL can still be
// overridden with Config.BaseURL or $OPENAI_BASE_URL.
var (
	OpenAI     = Preset{Name: "openai", BaseURL: DefaultBaseURL, APIKeyEnv: "OPENAI_API_KEY"}
	Ollama     = Preset{Name: "ollama", BaseURL: "http://localhost:11434/v1", APIKeyEnv: "OLLAMA_API_KEY"}
	VLLM       = Preset{Name: "vllm", BaseURL: "http://localhost:8000/v1", APIKeyEnv: "VLLM_API_KEY"}
	LlamaCpp   = Preset{Name: "llamacpp", BaseURL: "http://localhost:8080/v1", APIKeyEnv: "LLAMA_API_KEY"}
	DeepSeek   = Preset{Name: "deepseek", BaseURL: "https://api.deepseek.com/v1", APIKeyEnv: "DEEPSEEK_API_KEY", SendReasoning: true}
	DashScope  = Preset{Name: "dashscope", BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", APIKeyEnv: "DASHSCOPE_API_KEY"}
	OpenRouter = Preset{Name: "openrouter", BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: "OPENROUTER_API_KEY"}
	// GeminiOpenAI is Gemini's OpenAI-compatible endpoint (Chat
	// Completions only; package gemini speaks Gemini's own API, with
	// thought signatures).
	GeminiOpenAI = Preset{Name: "gemini-openai", BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", APIKeyEnv: "GEMINI_API_KEY"}
	// Azure is Azure OpenAI: the key in the api-key header, the base URL
	// the resource's v1 API, https://RESOURCE.openai.azure.com/openai/v1
	// (the endpoint alone is enough), or an older deployment URL with its
	// api-version, https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT?api-version=2024-10-21,
	// whose query every request keeps. The model is the deployment's name.
	Azure = Preset{Name: "azure", APIKeyEnv: "AZURE_OPENAI_API_KEY", APIKeyHeader: "api-key", BaseURLEnv: "AZURE_OPENAI_ENDPOINT", RootPath: "/openai/v1"}
)

// Presets lists the presets by name.
var Presets = map[string]Preset{
	"openai": OpenAI, "ollama": Ollama, "vllm": VLLM, "llamacpp": LlamaCpp,
	"deepseek": DeepSeek, "dashscope": DashScope, "qwen": DashScope, "openrouter": OpenRouter,
	"gemini-openai": GeminiOpenAI, "azure": Azure,
}

// Config returns a Config for the preset and model. The key comes from the
// preset's variable unless set later; the base URL is the preset's (or
// its BaseURLEnv variable's).
func (p Preset) Config(model string) Config {
	return Config{BaseURL: p.BaseURL, Model: model, Name: p.Name, APIKeyHeader: p.APIKeyHeader,
		keyEnv: p.APIKeyEnv, baseEnv: p.BaseURLEnv, rootPath: p.RootPath}
}

// resolved is a Config with defaults applied.
type resolved struct {
	name    string
	baseURL string
	model   string
	client  *httpc.Client
	limit   int64 // MaxResponseBytes, resolved
	// err fails every call: the configuration cannot work (no base URL
	// for a preset that has no default).
	err error
}

func (c Config) resolve() resolved {
	name := c.Name
	if name == "" {
		name = "openai"
	}
	key := c.APIKey
	if c.Token != nil {
		key = "" // the token replaces the key
	} else if key == "" {
		env := c.keyEnv
		if env == "" {
			env = "OPENAI_API_KEY"
		}
		key = os.Getenv(env)
	}
	var err error
	base := c.BaseURL
	switch {
	case base != "":
	case c.baseEnv != "":
		// Never OPENAI_BASE_URL or OpenAI's API: the key is this server's.
		if base = os.Getenv(c.baseEnv); base == "" {
			err = &runlet.ProviderError{Provider: name, Err: runlet.ErrInvalidRequest,
				Message: "no base URL: set Config.BaseURL (base_url in a config file, --base-url) or $" + c.baseEnv}
		}
	default:
		base = os.Getenv("OPENAI_BASE_URL")
		if base == "" {
			base = DefaultBaseURL
		}
	}
	if c.rootPath != "" {
		if u, perr := url.Parse(base); perr == nil && u.Host != "" && (u.Path == "" || u.Path == "/") {
			base = httpc.JoinURL(base, c.rootPath)
		}
	}
	h := make(http.Header, len(c.Headers)+4)
	for k, v := range c.Headers {
		h[http.CanonicalHeaderKey(k)] = v
	}
	switch {
	case key == "":
	case c.APIKeyHeader != "":
		h.Set(c.APIKeyHeader, key)
	default:
		h.Set("Authorization", "Bearer "+key)
	}
	if c.Organization != "" {
		h.Set("OpenAI-Organization", c.Organization)
	}
	if c.Project != "" {
		h.Set("OpenAI-Project", c.Project)
	}
	retries := c.MaxRetries
	switch {
	case retries == 0:
		retries = httpc.DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	return resolved{
		name:    name,
		baseURL: base, // endpoints are joined to it by httpc.JoinURL, which keeps its query
		model:   c.Model,
		client:  httpc.NewClient(name, c.HTTPClient, retries, h, c.secretHeaders(), c.AllowInsecureHTTP).WithStreamIdle(c.StreamIdleTimeout).WithToken(c.Token),
		limit:   httpc.NewBudget(name, c.MaxResponseBytes).Limit(),
		err:     err,
	}
}

// secretHeaders are the headers besides the usual key headers that carry a
// credential: the user's, and APIKeyHeader.
func (c Config) secretHeaders() http.Header {
	if c.APIKeyHeader == "" {
		return c.Headers
	}
	h := c.Headers.Clone()
	if h == nil {
		h = http.Header{}
	}
	h[http.CanonicalHeaderKey(c.APIKeyHeader)] = nil
	return h
}
