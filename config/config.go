package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
	"github.com/runlet/runlet/guardrails"
	"github.com/runlet/runlet/internal/suggest"
	"github.com/runlet/runlet/providers/openai"
)

// File is the decoded form of a config file. The CLI also builds one from
// its flags, so a flag and a config key mean the same thing.
type File struct {
	// Name labels the agent in events and logs.
	Name string `yaml:"name"`
	// Instructions is the system prompt.
	Instructions string `yaml:"instructions"`
	// Model says which model answers, through which provider.
	Model Model `yaml:"model"`
	// MaxTurns bounds model calls per run; 0 leaves the Runtime's (20 unless
	// set).
	MaxTurns int `yaml:"max_turns"`
	// Limits bound each run's usage: input_tokens, output_tokens,
	// total_tokens, requests, tool_calls.
	Limits runlet.UsageLimits `yaml:"limits"`
	// Context is the context policy, applied before every model call.
	Context Context `yaml:"context"`
	// Store is where sessions, state and checkpoints live: memory, sqlite,
	// postgres or redis (see Store and Setup.OpenStore).
	Store Store `yaml:"store"`
	// Tools the model may call, by name: the Loader's registry, then the
	// built-ins (Builtins).
	Tools []ToolRef `yaml:"tools"`
	// HostedTools are tools the provider runs itself, such as web search
	// (see HostedTool).
	HostedTools []HostedTool `yaml:"hosted_tools"`
	// ToolTimeout bounds each tool call that has no timeout of its own.
	ToolTimeout time.Duration `yaml:"tool_timeout"`
	// ToolConcurrency bounds parallel tool calls within a turn.
	ToolConcurrency int `yaml:"tool_concurrency"`
	// MCPServers are MCP servers whose tools the agent may call; see
	// MCPServer and Setup.ConnectMCP.
	MCPServers []MCPServer `yaml:"mcp_servers"`
	// Prices is a price table (runlet.WithPrices), by model name as the
	// provider reports it (a dated ID also finds its alias's entry): per
	// model, input, cached_input, cache_write and output prices per million
	// tokens, and optionally long_context_above with a long_context price.
	// A model without a price is unpriced: its cost is unknown, not zero.
	Prices runlet.Prices `yaml:"prices"`
	// OutputSchema, a JSON Schema written in YAML (or JSON), asks for a
	// final answer that is JSON matching it: validated, and asked for again
	// when it does not match (see runlet.RunAs). Result.Output is the JSON.
	OutputSchema map[string]any `yaml:"output_schema"`
	// Guardrails turns on ready guardrails (see Guardrails).
	Guardrails Guardrails `yaml:"guardrails"`

	// Source names where the config came from, for messages: the file
	// name given to Load or Decode; empty for a File built in code.
	Source string `yaml:"-"`

	pos map[string]pos // where Decode found each value
}

// Model is the model section.
type Model struct {
	// Provider is the adapter: "openai" (Chat Completions),
	// "openai-responses", "anthropic", "gemini" (the Gemini API), or an
	// OpenAI-compatible preset:
	// "ollama", "vllm", "llamacpp", "deepseek", "qwen" (or "dashscope"),
	// "openrouter", "gemini-openai" (Gemini's OpenAI-compatible endpoint),
	// "azure" and "azure-responses" (Azure OpenAI's Chat Completions and
	// Responses: name is the deployment, base_url the resource's
	// endpoint, its v1 root, or a deployment URL with its ?api-version=,
	// else $AZURE_OPENAI_ENDPOINT; see Deployment; the key is api_key or
	// $AZURE_OPENAI_API_KEY, else an Entra ID token when the Loader has
	// ProviderOpeners.EntraToken). The clouds whose credentials need an
	// SDK: "bedrock" (Amazon Bedrock, see Region) and "vertex" (Vertex
	// AI: Gemini, or Claude for a claude-* name; see Project), through
	// Loader.Providers. See Providers.
	Provider string `yaml:"provider"`
	// Name is the model name, such as "gpt-4o-mini".
	Name string `yaml:"name"`
	// BaseURL overrides the provider's API root.
	BaseURL string `yaml:"base_url" config:"credential"`
	// APIKey is the credential; write it as ${ENV_VAR}, never inline.
	// Empty means the provider's variable (OPENAI_API_KEY, ...).
	APIKey string `yaml:"api_key" config:"credential"`
	// Headers are added to every request; like the key, they go only to
	// the API's host, over https or to a loopback address.
	Headers map[string]string `yaml:"headers" config:"credential"`
	// AllowInsecureHTTP lets the key and headers go over plain http:// to
	// a host that is not loopback (the adapters' Config.AllowInsecureHTTP).
	AllowInsecureHTTP bool `yaml:"allow_insecure_http"`
	// Region is the AWS Region of provider bedrock; empty means the AWS
	// SDK's ($AWS_REGION, $AWS_DEFAULT_REGION, the profile's).
	Region string `yaml:"region"`
	// Project and Location are the Google Cloud project and the region
	// (or "global") of provider vertex; empty means $GOOGLE_CLOUD_PROJECT
	// (else the credentials' project) and $GOOGLE_CLOUD_LOCATION (else
	// global).
	Project  string `yaml:"project"`
	Location string `yaml:"location"`
	// Deployment and APIVersion address Azure OpenAI's older, versioned
	// API (providers azure and azure-responses): with api_version,
	// requests go to base_url's (else $AZURE_OPENAI_ENDPOINT's)
	// /openai/deployments/{deployment}/chat/completions or
	// /openai/responses, with ?api-version=; without it, to the v1 API.
	// The deployment defaults to name, and name to the deployment.
	Deployment string `yaml:"deployment"`
	APIVersion string `yaml:"api_version"`
	// StreamIdleTimeout bounds how long a streamed response may go without
	// a byte from the server, its headers included, such as 2m; past it the
	// call fails as an incomplete stream, retried like a dropped
	// connection (the adapters' Config.StreamIdleTimeout). Zero or absent
	// means the adapters' default, 10 minutes.
	StreamIdleTimeout time.Duration `yaml:"stream_idle_timeout"`
	// MaxRetries bounds retries of failed requests; nil means the
	// provider's default (2), 0 means none.
	MaxRetries *int `yaml:"max_retries"`
	// Settings are the common request settings: temperature, top_p,
	// max_output_tokens, stop_sequences, and reasoning (effort: low,
	// medium or high; budget_tokens; summary), mapped by each provider
	// (see runlet.Reasoning).
	Settings runlet.Settings `yaml:"settings"`
	// Options are provider-specific request options
	// (runlet.ModelRequest.Options), such as reasoning_effort or thinking.
	Options map[string]any `yaml:"options"`
}

// Context is the context policy: which history each model call sees.
type Context struct {
	// KeepLastTurns keeps only the last N turns (runlet.KeepLastTurns).
	KeepLastTurns int `yaml:"keep_last_turns"`
	// MaxMessages keeps at most N messages, dropping the oldest whole
	// turns; the turn in progress is always kept whole
	// (runlet.KeepLastMessages).
	MaxMessages int `yaml:"max_messages"`
	// TokenBudget drops the oldest turns to stay within N input tokens
	// (runlet.TokenBudget).
	TokenBudget int `yaml:"token_budget"`
}

// Guardrails are the ready guardrails of package guardrails a config can
// turn on; a Go program can add its own to Setup.Agent.Guardrails.
type Guardrails struct {
	// PII screens the input, the answer, tool arguments and tool results
	// for personal data (guardrails.PII): on the input or the answer it
	// stops the run; a tool call or result it answers with an error the
	// model sees.
	PII bool `yaml:"pii"`
	// MaxInputBytes refuses an input longer than N bytes before any model
	// call (guardrails.MaxInputBytes); 0 means no bound.
	MaxInputBytes int `yaml:"max_input_bytes"`
}

// Setup is what a config describes: an agent and the runtime options to run
// it with.
type Setup struct {
	Agent          *runlet.Agent
	RuntimeOptions []runlet.RuntimeOption
	// File is the config the setup was built from.
	File *File
	// Store is the store Setup.OpenStore opened; nil before, or without a
	// store section.
	Store runlet.Store

	stores StoreOpeners // the Loader's
}

// NewRuntime returns a runtime with the setup's options followed by extra.
func (s *Setup) NewRuntime(extra ...runlet.RuntimeOption) *runlet.Runtime {
	return runlet.NewRuntime(append(slices.Clip(s.RuntimeOptions), extra...)...)
}

// Loader loads config files. The zero value is ready to use: built-in tools
// only, variables from the process environment, adapters' default HTTP
// client.
type Loader struct {
	// Tools are the tools a config may name besides the built-ins; a tool
	// here shadows a built-in of the same name.
	Tools Registry
	// Factories make the tools a config names with use:, by factory name,
	// from their params: (see ToolFactory).
	Factories map[string]ToolFactory
	// Stores open the durable stores a config's store section may name
	// (memory needs none); a kind without an opener is an error.
	Stores StoreOpeners
	// Providers reach the clouds whose credentials need an SDK (bedrock,
	// vertex, azure with Entra ID); a cloud without its opener is an
	// error.
	Providers ProviderOpeners
	// LookupEnv resolves ${VAR} references; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// AllowEnv lists the variables that a config file may read outside
	// its credential fields, where the value can reach the model (see
	// "Variables" in the package doc): names, or prefixes followed by *
	// ("APP_*"; "*" allows every variable, for config files you wrote).
	AllowEnv []string
	// HTTPClient is given to the provider adapter; nil means its default.
	HTTPClient *http.Client
	// MaxBytes bounds the size of a config file; 0 means DefaultMaxBytes.
	MaxBytes int
}

// Load reads the config file at path and builds its agent and runtime
// options, naming tools from reg or the built-ins.
func Load(path string, reg Registry) (*Setup, error) {
	return (&Loader{Tools: reg}).Load(path)
}

// Load reads the config file at path and builds its setup.
func (l *Loader) Load(path string) (*Setup, error) {
	f, err := l.DecodeFile(path)
	var ce *Error
	if err != nil && !errors.As(err, &ce) {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err != nil {
		return nil, err
	}
	return l.Build(f)
}

// DecodeFile reads the config file at path, refusing one over MaxBytes
// without reading it all, and decodes it as Decode does.
func (l *Loader) DecodeFile(path string) (*File, error) {
	data, err := l.readFile(path)
	if err != nil {
		return nil, err
	}
	return l.Decode(path, data)
}

// Decode parses a config strictly: an unknown field, a value of the wrong
// type, a YAML syntax error or an unset ${VAR} is an *Error with the file
// name (name is used only in messages), line and column, and a hint; so
// are a value out of range, an unknown provider, a tool that neither the
// Loader's Tools nor the built-ins have, and an invalid output_schema. All
// problems are returned at once, joined: an unset variable does not hide
// an unknown tool until the next try. A file over MaxBytes, aliases that
// repeat more than 100,000 values or 1 MiB of text (an "alias bomb"), an
// alias inside its own anchor's value and nesting deeper than 1,000 levels
// are refused the same way, in time and memory bounded by the file's size.
func (l *Loader) Decode(name string, data []byte) (*File, error) {
	if len(data) > l.maxBytes() {
		return nil, l.tooLarge(name)
	}
	d := &decoder{file: name, lookup: l.LookupEnv, pos: map[string]pos{}, allow: l.AllowEnv, factories: l.Factories}
	if d.lookup == nil {
		d.lookup = os.LookupEnv
		d.environ = os.Environ
	}
	root := d.parseDocument(data)
	if root == nil {
		return nil, errors.Join(d.errs...)
	}
	d.budget(root, len(data))
	f := &File{}
	d.decode(root, reflect.ValueOf(f).Elem(), "")
	f.pos, f.Source = d.pos, name
	// Every problem in one pass: the checks run beside the decoding
	// errors, skipping the fields those are about (an unset ${VAR} in
	// model.provider is not also a missing provider).
	bad := badFields(d.errs)
	d.errs = append(d.errs, f.validate(bad)...)
	_, errs := l.resolveTools(f, bad, false)
	d.errs = append(d.errs, errs...)
	_, errs = f.hostedTools()
	d.errs = append(d.errs, errs...)
	d.errs = append(d.errs, l.validateStore(f, bad)...)
	d.errs = append(d.errs, l.validateCloud(f, bad)...)
	if p := f.Model.Provider; p != "" && !bad.under("model.provider") && !slices.Contains(Providers(), p) && !slices.Contains(cloudOnly, p) {
		d.errs = append(d.errs, f.errAt("model.provider", p, "%s", unknownProvider(p)))
	}
	if !bad.under("output_schema") {
		if _, err := outputSchema(f.OutputSchema); err != nil {
			d.errs = append(d.errs, f.errAt("output_schema", "", "%s", err.Error()))
		}
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return f, nil
}

// errAt returns an *Error about field, positioned where the file wrote it
// if the field still holds the value written there (a File changed in code
// after Decode, as by the CLI's flags, has no position for its changes).
func (f *File) errAt(field, value, format string, args ...any) *Error {
	e := &Error{File: f.Source, Field: field, Msg: fmt.Sprintf(format, args...)}
	if p, ok := f.pos[field]; ok && (value == "" || p.value == value) {
		e.Line, e.Column = p.line, p.col
	}
	return e
}

// fieldSet is the fields that have a problem already.
type fieldSet map[string]bool

// badFields collects the fields errs are about.
func badFields(errs []error) fieldSet {
	bad := fieldSet{}
	for _, err := range errs {
		var e *Error
		if errors.As(err, &e) && e.Field != "" {
			bad[e.Field] = true
		}
	}
	return bad
}

// under reports whether field, or a field inside it, has a problem.
func (b fieldSet) under(field string) bool {
	for f := range b {
		if f == field || strings.HasPrefix(f, field+".") {
			return true
		}
	}
	return false
}

// validate checks ranges and required fields, but not those in bad.
func (f *File) validate(bad fieldSet) []error {
	var errs []error
	if _, ok := f.pos["model"]; !ok && f.Model.Provider == "" {
		errs = append(errs, &Error{File: f.Source, Field: "model", Msg: "required; add a model section:\n" +
			"    model:\n      provider: openai\n      name: gpt-4o-mini"})
		return errs
	}
	if f.Model.Provider == "" && !bad.under("model.provider") {
		errs = append(errs, f.errAt("model", "", "model.provider is required: one of %s", list(Providers())))
	}
	if f.Model.Name == "" && f.Model.Deployment == "" && !bad.under("model.name") {
		errs = append(errs, f.errAt("model", "", "model.name is required, such as gpt-4o-mini or claude-sonnet-4-5"))
	}
	nonNegative := map[string]int{
		"max_turns":                        f.MaxTurns,
		"tool_concurrency":                 f.ToolConcurrency,
		"limits.input_tokens":              f.Limits.InputTokens,
		"limits.output_tokens":             f.Limits.OutputTokens,
		"limits.total_tokens":              f.Limits.TotalTokens,
		"limits.requests":                  f.Limits.Requests,
		"limits.tool_calls":                f.Limits.ToolCalls,
		"context.keep_last_turns":          f.Context.KeepLastTurns,
		"context.max_messages":             f.Context.MaxMessages,
		"context.token_budget":             f.Context.TokenBudget,
		"guardrails.max_input_bytes":       f.Guardrails.MaxInputBytes,
		"model.settings.max_output_tokens": f.Model.Settings.MaxOutputTokens,
	}
	if f.Model.MaxRetries != nil {
		nonNegative["model.max_retries"] = *f.Model.MaxRetries
	}
	for _, field := range slices.Sorted(maps.Keys(nonNegative)) {
		if v := nonNegative[field]; v < 0 {
			errs = append(errs, f.errAt(field, "", "must not be negative, got %d", v))
		}
	}
	if t := f.Model.Settings.Temperature; t != nil && *t < 0 {
		errs = append(errs, f.errAt("model.settings.temperature", "", "must not be negative, got %v", *t))
	}
	if p := f.Model.Settings.TopP; p != nil && (*p < 0 || *p > 1) {
		errs = append(errs, f.errAt("model.settings.top_p", "", "must be between 0 and 1, got %v", *p))
	}
	if r := f.Model.Settings.Reasoning; r.Validate() != nil && !bad.under("model.settings.reasoning") {
		field := "model.settings.reasoning.effort"
		if r.BudgetTokens < 0 {
			field = "model.settings.reasoning.budget_tokens"
		}
		errs = append(errs, f.errAt(field, "", "%v", r.Validate()))
	}
	errs = append(errs, f.validateMCP(bad)...)
	return errs
}

// unknownProvider is the error of a provider name Providers does not list.
func unknownProvider(p string) error {
	known := append(Providers(), cloudOnly...)
	slices.Sort(known)
	return fmt.Errorf("unknown provider %q%s (known: %s)", p, suggest.Hint(p, known), list(known))
}

// Providers lists the provider names a config may use with any Loader;
// bedrock and vertex need Loader.Providers besides.
func Providers() []string {
	names := []string{"openai", "openai-responses", "anthropic", "gemini", "azure-responses"}
	for name := range openai.Presets {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Build makes the agent and runtime options a File describes. An unknown
// provider or tool is an *Error positioned where the file named it.
func (l *Loader) Build(f *File) (*Setup, error) {
	var errs []error
	model, err := l.newModel(f.Model)
	if err != nil {
		errs = append(errs, f.errAt("model.provider", f.Model.Provider, "%s", err.Error()))
	}
	tools, terrs := l.resolveTools(f, nil, true)
	errs = append(errs, terrs...)
	hosted, herrs := f.hostedTools()
	errs = append(errs, herrs...)
	output, err := outputSchema(f.OutputSchema)
	if err != nil {
		errs = append(errs, f.errAt("output_schema", "", "%s", err.Error()))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	agent := &runlet.Agent{
		Name:         f.Name,
		Instructions: f.Instructions,
		Model:        model,
		Tools:        tools,
		HostedTools:  hosted,
		Settings:     f.Model.Settings,
		Options:      maps.Clone(f.Model.Options),
		MaxTurns:     f.MaxTurns,
		OutputSchema: output,
	}
	if agent.Name == "" {
		agent.Name = "agent"
	}
	if n := f.Guardrails.MaxInputBytes; n > 0 {
		agent.Guardrails = append(agent.Guardrails, guardrails.MaxInputBytes(n))
	}
	if f.Guardrails.PII {
		agent.Guardrails = append(agent.Guardrails, guardrails.PII())
	}
	var opts []runlet.RuntimeOption
	if f.Limits != (runlet.UsageLimits{}) {
		opts = append(opts, runlet.WithLimits(f.Limits))
	}
	if n := f.Context.KeepLastTurns; n > 0 {
		opts = append(opts, runlet.WithPreparers(runlet.KeepLastTurns(n)))
	}
	if n := f.Context.MaxMessages; n > 0 {
		opts = append(opts, runlet.WithPreparers(runlet.KeepLastMessages(n)))
	}
	if n := f.Context.TokenBudget; n > 0 {
		opts = append(opts, runlet.WithPreparers(runlet.TokenBudget(n, nil)))
	}
	if f.ToolTimeout > 0 {
		opts = append(opts, runlet.WithToolTimeout(f.ToolTimeout))
	}
	if f.ToolConcurrency > 0 {
		opts = append(opts, runlet.WithToolConcurrency(f.ToolConcurrency))
	}
	if len(f.Prices) > 0 {
		opts = append(opts, runlet.WithPrices(maps.Clone(f.Prices)))
	}
	return &Setup{Agent: agent, RuntimeOptions: opts, File: f, stores: l.Stores}, nil
}

// outputSchema turns the output_schema section into an OutputSchema named
// by its title (else "output"); nil without one.
func outputSchema(m map[string]any) (*runlet.OutputSchema, error) {
	if m == nil {
		return nil, nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	if err := checkTypes(s, ""); err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %w", err)
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %w", err)
	}
	name := "output"
	if schemaNameOK(s.Title) {
		name = s.Title
	}
	return &runlet.OutputSchema{Name: name, Description: s.Description, Schema: s}, nil
}

// schemaNameOK reports whether every provider accepts s as a schema name.
func schemaNameOK(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if r != '_' && r != '-' && (r < '0' || r > '9') && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
}
