package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/internal/demo"
	"github.com/runlet/runlet/internal/suggest"
	"github.com/runlet/runlet/pricing"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// defaultModels are the models used when neither --model, the config nor
// $RUNLET_MODEL names one. Local servers have no default: the model is
// whatever the user pulled or served.
var defaultModels = map[string]string{
	"openai":           "gpt-4o-mini",
	"openai-responses": "gpt-4o-mini",
	"anthropic":        "claude-sonnet-4-5",
	"gemini":           "gemini-2.5-flash",
	"deepseek":         "deepseek-chat",
	"qwen":             "qwen-plus",
	"dashscope":        "qwen-plus",
	"openrouter":       "openai/gpt-4o-mini",
	"gemini-openai":    "gemini-2.5-flash",
	"vertex":           "gemini-2.5-flash",
}

// offlineKey is the API key of a replay, sent nowhere. Adapters mask their
// key in errors, so it is no word an error would use ("replay" was masked
// out of the replay's own messages).
const offlineKey = "sk-offline-not-a-key"

// session is a prepared agent and runtime, plus what must be cleaned up.
type session struct {
	setup *config.Setup
	rt    *runlet.Runtime
	// demo is the replayer of the bundled session when no model is
	// configured; replay is the one of --replay.
	demo       *demo.Replayer
	replay     *runlettest.Replayer
	recorder   *runlettest.Recorder
	recordPath string
	replayPath string
	// store keeps sessions (--session, mcp serve's session_id): --store,
	// else the config's store:, else the default SQLite file.
	store       runlet.Store
	storeCloser io.Closer
	mcp         io.Closer // the MCP servers' connections
	describe    string    // "gpt-4o-mini via openai"
	// ignored lists the flags the demo replay cannot honour.
	ignored []string
}

// usageError is a problem with the command line or the config: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// prepare builds the agent and runtime the flags (and config) describe.
func (a *app) prepare(ctx context.Context, f *flags, extra ...runlet.RuntimeOption) (*session, error) {
	// A config file may have been written by someone else: outside
	// credentials it reads only the variables the user allowed, and the
	// CLI's own variable for the model's name.
	loader := &config.Loader{AllowEnv: append([]string{"RUNLET_MODEL"}, f.allowEnv...), Stores: storeOpeners, Providers: a.ext.Providers}
	file := &config.File{Name: "runlet"}
	if f.config != "" {
		var err error
		file, err = loader.DecodeFile(f.config)
		var ce *config.Error
		if err != nil && !errors.As(err, &ce) {
			return nil, usagef("--config: %w", err)
		}
		if err != nil {
			return nil, usageError{err}
		}
	}
	s := &session{}

	// Flags override the config.
	m := &file.Model
	if f.provider != "" {
		m.Provider = f.provider
	}
	if f.model != "" {
		m.Name = f.model
	}
	if f.baseURL != "" {
		m.BaseURL = f.baseURL
	}
	if f.system != "" {
		file.Instructions = f.system
	}
	if len(f.options) > 0 {
		if m.Options == nil {
			m.Options = map[string]any{}
		}
		maps.Copy(m.Options, f.options)
	}
	if f.temperature != nil {
		m.Settings.Temperature = f.temperature
	}
	if f.maxTokens > 0 {
		m.Settings.MaxOutputTokens = f.maxTokens
	}
	if r := f.reasoning; r != (runlet.Reasoning{}) {
		if r.Effort != "" {
			m.Settings.Reasoning.Effort = r.Effort
		}
		if r.BudgetTokens > 0 {
			m.Settings.Reasoning.BudgetTokens = r.BudgetTokens
		}
		// The reasoning asked for is shown, unless hidden.
		m.Settings.Reasoning.Summary = m.Settings.Reasoning.Summary || !f.noReasoning
	}
	if f.maxTurns > 0 {
		file.MaxTurns = f.maxTurns
	}
	for _, t := range f.tools {
		file.Tools = append(file.Tools, config.ToolRef{Name: t})
	}
	for _, k := range f.hosted {
		file.HostedTools = append(file.HostedTools, config.HostedTool{Kind: k})
	}
	file.MCPServers = append(file.MCPServers, mcpServers(f.mcp, file.MCPServers)...)
	if f.outputSchema != "" {
		data, err := readFile(f.outputSchema, config.DefaultMaxBytes)
		if err != nil {
			return nil, usagef("--output-schema: %w", err)
		}
		file.OutputSchema = nil
		if err := json.Unmarshal(data, &file.OutputSchema); err != nil || file.OutputSchema == nil {
			return nil, usagef("--output-schema: %s is not a JSON object: %v", f.outputSchema, err)
		}
		if err := config.CheckOutputSchema(file.OutputSchema); err != nil {
			return nil, usagef("--output-schema: %s: %v", f.outputSchema, err)
		}
	}

	if m.Provider == "" {
		switch {
		case f.baseURL != "" || a.getenv("OPENAI_BASE_URL") != "" || a.getenv("OPENAI_API_KEY") != "":
			m.Provider = "openai"
		case a.getenv("ANTHROPIC_API_KEY") != "" || a.getenv("ANTHROPIC_BASE_URL") != "":
			m.Provider = "anthropic"
		case a.getenv("GEMINI_API_KEY") != "" || a.getenv("GOOGLE_API_KEY") != "":
			m.Provider = "gemini"
		case f.replay != "":
			m.Provider = "openai"
		default:
			// Nothing configured: replay the bundled session through the
			// real adapter, with the tool it used.
			if err := f.offline(); err != nil {
				return nil, err
			}
			m.Provider, m.Name, m.BaseURL, m.APIKey = "openai", "gpt-4o-mini", "https://api.openai.com/v1", offlineKey
			s.ignored = f.shapingFlags()
			s.demo = demo.NewReplayer()
			loader.HTTPClient = &http.Client{Transport: s.demo}
			loader.Tools = config.Tools(capitalTool())
			file.Tools = append(file.Tools, config.ToolRef{Name: "get_capital"})
		}
	}
	if err := a.checkCloud(m.Provider); err != nil {
		return nil, err
	}
	if err := f.cloud.apply(m); err != nil {
		return nil, err
	}
	if known := a.knownProviders(); !slices.Contains(known, m.Provider) {
		return nil, usagef("unknown provider %q%s (known: %s)", m.Provider, suggest.Hint(m.Provider, known), strings.Join(known, ", "))
	}
	if m.Name == "" {
		m.Name = cmp.Or(a.getenv("RUNLET_MODEL"), m.Deployment)
	}
	if m.Name == "" {
		def, ok := defaultModels[m.Provider]
		example := "such as llama3.2 for Ollama"
		switch m.Provider {
		case "azure", "azure-responses":
			example = "on Azure, the name of your deployment"
		case "bedrock":
			example = "a Bedrock model ID or inference profile, such as us.amazon.nova-micro-v1:0"
		}
		if where, base := a.customServer(f, *m); base != "" {
			// The documented defaults are models of the providers' own
			// APIs; another server serves the models it has.
			why := ""
			if ok {
				why = fmt.Sprintf(" (%s is the default for %s's own API only)", def, m.Provider)
			}
			return nil, usagef("no model name: %s points at %s, a server whose models runlet cannot guess%s: pass --model (%s) or set RUNLET_MODEL",
				where, displayURL(base), why, example)
		}
		if !ok {
			return nil, usagef("no model name for provider %s: pass --model (%s) or set RUNLET_MODEL", m.Provider, example)
		}
		m.Name = def
	}

	switch {
	case f.replay != "":
		c, err := runlettest.LoadCassette(f.replay)
		if err != nil {
			return nil, usagef("--replay: %w", err)
		}
		s.replay, s.replayPath = runlettest.NewReplayer(c), f.replay
		loader.HTTPClient = &http.Client{Transport: s.replay}
		if m.APIKey == "" {
			m.APIKey = offlineKey
		}
		if m.MaxRetries == nil {
			m.MaxRetries = new(int) // a mismatch will not go away on retry
		}
	case s.demo == nil:
		if err := a.checkCredentials(*m); err != nil {
			return nil, err
		}
		if f.record != "" {
			s.recorder = runlettest.NewRecorder(nil)
			s.recordPath = f.record
			loader.HTTPClient = &http.Client{Transport: s.recorder}
		}
	}

	setup, err := loader.Build(file)
	if err != nil {
		return nil, usageError{err}
	}
	s.setup = setup
	s.describe = m.Name + " via " + m.Provider
	if m.BaseURL != "" && s.demo == nil {
		s.describe += " (" + displayURL(m.BaseURL) + ")"
	}

	// Runs are priced from the built-in table, with the config's prices
	// over it (see --usage).
	opts := append([]runlet.RuntimeOption{runlet.WithPrices(pricing.With(file.Prices))}, extra...)
	st, closer, err := a.openStore(ctx, f, setup)
	if err != nil {
		return nil, err
	}
	if st != nil {
		s.store, s.storeCloser = st, closer
		opts = append(opts, runlet.WithStore(st)) // over chat's memory store
	}
	if len(file.MCPServers) > 0 {
		if s.mcp, err = setup.ConnectMCP(ctx, a.stderr); err != nil {
			if s.storeCloser != nil {
				_ = s.storeCloser.Close()
			}
			return nil, err
		}
	}
	s.rt = setup.NewRuntime(opts...)
	return s, nil
}

// customServer names where the model's base URL comes from (--base-url,
// base_url in the config, OPENAI_BASE_URL) and returns it, when it is a
// server other than the provider's own; "" otherwise.
func (a *app) customServer(f *flags, m config.Model) (where, base string) {
	switch {
	case f.baseURL != "":
		where, base = "--base-url", f.baseURL
	case m.BaseURL != "":
		where, base = "base_url in "+f.config, m.BaseURL
	case m.Provider == "openai" || m.Provider == "openai-responses":
		where, base = "OPENAI_BASE_URL", a.getenv("OPENAI_BASE_URL")
	}
	if u, err := url.Parse(base); base == "" || err == nil && u.Hostname() == "api.openai.com" {
		return "", ""
	}
	return where, base
}

// privateDir makes dir, and its missing parents, accessible to the user
// only (0700), and takes group and other access away from dir if it
// exists: the CLI's own cache directory holds its sessions.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, info.Mode().Perm()&^0o077)
	}
	return nil
}

// checkCredentials fails early, with the fix, when a hosted provider has no
// API key: better than an HTTP 401 after the request.
func (a *app) checkCredentials(m config.Model) error {
	switch m.Provider {
	case "azure", "azure-responses":
		return a.checkAzure(m)
	case "bedrock", "vertex":
		return nil // the cloud's credential chain, which says what it tried
	}
	if p, ok := openai.Presets[m.Provider]; ok && p.BaseURLEnv != "" && m.BaseURL == "" && a.getenv(p.BaseURLEnv) == "" {
		// Such a preset (Azure) has no base URL of its own.
		return usagef("provider %s has no base URL: export %s=https://RESOURCE.openai.azure.com, or pass --base-url (base_url in the config), such as https://RESOURCE.openai.azure.com/openai/v1 or a deployment's URL with its ?api-version=",
			m.Provider, p.BaseURLEnv)
	}
	if m.APIKey != "" {
		return nil
	}
	switch m.Provider {
	case "openai", "openai-responses":
		base := m.BaseURL
		if base == "" {
			base = a.getenv("OPENAI_BASE_URL")
		}
		if (base == "" || strings.Contains(base, "api.openai.com")) && a.getenv("OPENAI_API_KEY") == "" {
			return usagef("OPENAI_API_KEY is not set: export OPENAI_API_KEY=sk-..., or use --base-url for a local server such as Ollama")
		}
	case "anthropic":
		if m.BaseURL == "" && a.getenv("ANTHROPIC_BASE_URL") == "" && a.getenv("ANTHROPIC_API_KEY") == "" {
			return usagef("ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=sk-ant-...")
		}
	case "gemini":
		if m.BaseURL == "" && a.getenv("GEMINI_API_KEY") == "" && a.getenv("GOOGLE_API_KEY") == "" {
			return usagef("GEMINI_API_KEY is not set: export GEMINI_API_KEY=... (a Gemini API key from aistudio.google.com)")
		}
	default:
		p, ok := openai.Presets[m.Provider]
		local := strings.HasPrefix(p.BaseURL, "http://localhost") || strings.HasPrefix(p.BaseURL, "http://127.")
		if ok && !local && m.BaseURL == "" && p.APIKeyEnv != "" && a.getenv(p.APIKeyEnv) == "" {
			return usagef("%s is not set: export %s=... (the %s API key)", p.APIKeyEnv, p.APIKeyEnv, m.Provider)
		}
	}
	return nil
}

// close saves the recording and closes the store.
func (s *session) close(a *app) {
	if s.recorder != nil {
		c := s.recorder.Cassette()
		if err := c.Save(s.recordPath); err != nil {
			fmt.Fprintf(a.stderr, "runlet: %v\n", err)
		} else {
			fmt.Fprintf(a.stderr, "runlet: recorded %d request(s) to %s (credentials removed); replay with --replay %s\n",
				len(c.Interactions), s.recordPath, s.recordPath)
		}
	}
	if s.replay != nil {
		if n := s.replay.Remaining(); n > 0 {
			fmt.Fprintf(a.stderr, "runlet: %d recorded request(s) of %s were not replayed\n", n, s.replayPath)
		}
	}
	if s.storeCloser != nil {
		_ = s.storeCloser.Close()
	}
	if s.mcp != nil {
		_ = s.mcp.Close()
	}
}

type capitalArgs struct {
	Country string `json:"country" jsonschema:"the country, such as UK or France"`
}

// capitalTool is the tool of the bundled recording: the recorded model
// calls get_capital({"country":"UK"}) and is told "London".
func capitalTool() runlet.Tool {
	capitals := map[string]string{
		"uk": "London", "united kingdom": "London", "france": "Paris", "germany": "Berlin",
		"japan": "Tokyo", "china": "Beijing", "italy": "Rome", "spain": "Madrid", "usa": "Washington, D.C.",
	}
	return runlet.NewTool("get_capital", "Returns the capital city of a country.",
		func(_ context.Context, in capitalArgs) (string, error) {
			if c, ok := capitals[strings.ToLower(strings.TrimSpace(in.Country))]; ok {
				return c, nil
			}
			return "", errors.New("unknown country " + in.Country)
		})
}

const goLive = `To talk to a live model instead, set one of:
  export OPENAI_API_KEY=sk-...           OpenAI (model gpt-4o-mini; --model to change)
  export ANTHROPIC_API_KEY=sk-ant-...    Anthropic (claude-sonnet-4-5)
  export GEMINI_API_KEY=...              Gemini (gemini-2.5-flash)
  export OPENAI_BASE_URL=http://localhost:11434/v1 RUNLET_MODEL=llama3.2
                                         Ollama, or any OpenAI-compatible server
or pass --config FILE (see examples/config/agent.yaml). runlet help run lists the flags.
`

// demoNotice says plainly that this is a replay, before it starts.
// ignored are the flags it does not honour.
func (a *app) demoNotice(prompt string, ignored []string) {
	fmt.Fprintln(a.stderr, a.style(dim, "runlet: no model is configured, so this is a REPLAY of a recorded session:"))
	fmt.Fprintln(a.stderr, a.style(dim, "        OpenAI gpt-4o-mini, two requests, replayed offline through the real adapter and runtime."))
	if prompt != "" && prompt != demo.Question {
		fmt.Fprintln(a.stderr, a.style(dim, "runlet: your prompt is not sent anywhere; the recording answers its own question:"))
	}
	fmt.Fprintln(a.stderr, a.style(dim, "        question: "+demo.Question))
	if len(ignored) > 0 {
		fmt.Fprintln(a.stderr, a.style(dim, "runlet: the replay ignores "+strings.Join(ignored, ", ")+
			": the recording answers the same whatever they say."))
	}
}

// demoEnd prints how to go live, after a replay.
func (a *app) demoEnd() {
	fmt.Fprint(a.stderr, "\n"+a.style(dim, "runlet: that was a replay; no model was called.\n"+goLive))
}

// displayURL drops credentials (user info, query) from a URL shown to the
// user.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// readFile reads the file at path, refusing one over limit bytes without
// reading it all.
func readFile(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err == nil && len(data) > limit {
		err = fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, err
}
