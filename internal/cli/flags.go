package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/suggest"
)

// flags are the flags run and chat share.
type flags struct {
	config   string
	allowEnv listFlag
	provider string
	model    string
	baseURL  string
	cloud    cloudFlags // --region, --project, --location, --deployment, --api-version
	system   string
	options  optionsFlag
	tools    listFlag
	hosted   listFlag // --hosted: tools the provider runs
	mcp      mcpFlag
	maxTurns int

	temperature *float64
	maxTokens   int
	reasoning   runlet.Reasoning // --reasoning, --reasoning-budget

	session string
	store   string
	// serveSessions is set by mcp serve, whose calls name their own
	// sessions: a store is opened only when one is configured.
	serveSessions bool

	json        bool
	quiet       bool
	noReasoning bool
	usage       bool

	record string
	replay string

	outputSchema string
}

const modelFlagsHelp = `Model (flags override --config; with neither, nor a key in the environment,
a recorded session is replayed):
  --config FILE          agent config in YAML (see examples/config/agent.yaml);
                         it may read any environment variable only for
                         credentials (api_key, base_url, headers; an MCP
                         server's url, headers and env), elsewhere only
                         RUNLET_MODEL and those --allow-env names
  --allow-env NAME       let --config read variable NAME in fields the model
                         can see (instructions, options, ...), repeatable;
                         NAME may end in * for a prefix: --allow-env 'APP_*'
  --provider NAME        openai | openai-responses | anthropic | gemini | ollama |
                         vllm | llamacpp | deepseek | qwen | dashscope | openrouter |
                         gemini-openai | azure | azure-responses (with
                         --base-url https://RESOURCE.openai.azure.com, or
                         AZURE_OPENAI_ENDPOINT; --model DEPLOYMENT);
                         bedrock | vertex, and azure with Entra ID instead of
                         a key, in the cloud build (in a clone: cd cloud &&
                         go run ./cmd/runlet; or go install
                         github.com/runlet/runlet/cloud/cmd/runlet@latest); see
                         --region, --project, --location, --deployment
                         (default: openai when OPENAI_API_KEY or OPENAI_BASE_URL
                         is set, else anthropic when ANTHROPIC_API_KEY is, else
                         gemini when GEMINI_API_KEY or GOOGLE_API_KEY is)
  --model NAME           model name (default: $RUNLET_MODEL, else gpt-4o-mini
                         for OpenAI, claude-sonnet-4-5 for Anthropic,
                         gemini-2.5-flash for Gemini; none for another server,
                         from --base-url or OPENAI_BASE_URL: its models are
                         its own)
  --base-url URL         API root of an OpenAI-compatible server, such as
                         http://localhost:11434/v1 (Ollama)
  --region R             AWS Region of --provider bedrock (else AWS_REGION, ...)
  --project P            Google Cloud project of --provider vertex (else
                         GOOGLE_CLOUD_PROJECT, else the credentials')
  --location L           Vertex AI region or global (else
                         GOOGLE_CLOUD_LOCATION, else global)
  --deployment D         Azure OpenAI deployment (azure, azure-responses)
  --api-version V        Azure OpenAI's older versioned API, such as
                         2024-10-21 (else the v1 API)
  --system TEXT          instructions (system prompt)
  --option KEY=VALUE     provider request option, repeatable; VALUE is JSON
                         when it parses (8, true, {"type":"enabled"}), else a
                         string: --option reasoning_effort=low
  --temperature T        sampling temperature
  --max-tokens N         output token limit per model call
  --reasoning LEVEL      how hard a reasoning model thinks: low, medium or
                         high, for every provider (Settings.Reasoning; an
                         --option for the provider's own field wins)
  --reasoning-budget N   thinking token budget (Anthropic, Gemini)
                         Either asks for the reasoning too, unless
                         --no-reasoning.
  --tool NAME            built-in tool to offer the model, repeatable:
                         current_time, calculator
  --hosted KIND          a tool the provider runs itself, repeatable:
                         web_search, code_execution, web_fetch (as the
                         provider offers them; citations are printed)
` + mcpFlagHelp + `  --max-turns N          model calls per run (default 20)
  --output-schema FILE   a JSON Schema (JSON file): the answer must be JSON
                         matching it; it is validated, asked for again when
                         it does not match, and only the JSON is printed
                         (needs a live model: the offline replay refuses it)

State:
  --session ID           keep history in session ID, in the store, so later
                         runs continue the conversation
  --store FILE           SQLite file for sessions; made 0600, in directories
                         made 0700. Default: the config's store: (memory,
                         sqlite, postgres or redis; see examples/config),
                         else the user cache directory's runlet/sessions.db

Output:
  --json                 print every event as one JSON line on stdout
  --quiet                print only the final answer
  --no-reasoning         hide the model's reasoning (shown dimmed otherwise)
  --usage                after each run, print its tokens and cost by model on
                         stderr; prices come from the built-in table (package
                         pricing, dated) and prices: in --config, which wins;
                         a model with no price shows "cost unknown"

Record and replay (for tests and demos; see runlettest):
  --record FILE          record the HTTP traffic to a cassette file
  --replay FILE          answer from a cassette instead of the network
`

const runUsage = `Usage: runlet run [flags] [prompt]

Runs an agent once: the prompt comes from the arguments (joined by spaces),
else from standard input. The answer streams to stdout; reasoning, tool calls
and the usage summary go to stderr, so "runlet run ... > answer.txt" keeps
only the answer.

` + modelFlagsHelp + `
Examples:
  runlet run "What is the capital of the UK?"
  OPENAI_API_KEY=sk-... runlet run --tool current_time "What day is it?"
  runlet run --provider anthropic --reasoning-budget 2048 "Prove that √2 is irrational."
  runlet run --provider ollama --model llama3.2 "Hello"
  git diff | runlet run --system "Review this diff." --quiet
  runlet run --config agent.yaml --json "Hi" | jq -r .type
  runlet run --session notes "Remember: the meeting is at 3pm."

Exit codes: 0 success, 1 run failed, 2 usage or config error, 3 limit reached,
4 waiting for approval, 130 interrupted (Ctrl-C; a second Ctrl-C quits at once).
`

const chatUsage = `Usage: runlet chat [flags]

An interactive session: each line you type is a prompt, answered with the
history of the conversation so far. /reset starts over, /exit (or Ctrl-D)
quits. Ctrl-C stops the current answer; at the prompt it quits. On a
terminal the line can be edited (arrows, Ctrl-A/E/K/U/W) and earlier lines
recalled with up and down. Lines can be piped in too: one prompt per line.

` + modelFlagsHelp + `
Examples:
  runlet chat
  runlet chat --provider anthropic --session work     (resumes "work" next time)
  printf 'Hi, I am Ann.\nWhat is my name?\n' | runlet chat --quiet

Exit codes: at the end of input (Ctrl-D, or Ctrl-C at the prompt of a
terminal), that of the last prompt (0 when it succeeded, 1 failed, 3 limit
reached); 2 usage or config error; 130 when a Ctrl-C signal quits.
`

// newFlagSet declares the shared flags on a FlagSet that reports nothing
// itself: the caller prints errors and usage.
func newFlagSet(name string, f *flags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.options = optionsFlag{}
	fs.StringVar(&f.config, "config", "", "")
	fs.Var(&f.allowEnv, "allow-env", "")
	fs.StringVar(&f.provider, "provider", "", "")
	fs.StringVar(&f.model, "model", "", "")
	fs.StringVar(&f.baseURL, "base-url", "", "")
	fs.StringVar(&f.cloud.region, "region", "", "")
	fs.StringVar(&f.cloud.project, "project", "", "")
	fs.StringVar(&f.cloud.location, "location", "", "")
	fs.StringVar(&f.cloud.deployment, "deployment", "", "")
	fs.StringVar(&f.cloud.apiVersion, "api-version", "", "")
	fs.StringVar(&f.system, "system", "", "")
	fs.Var(f.options, "option", "")
	fs.Var(&f.tools, "tool", "")
	fs.Var(&f.hosted, "hosted", "")
	fs.Var(&f.mcp, "mcp", "")
	fs.IntVar(&f.maxTurns, "max-turns", 0, "")
	fs.Func("temperature", "", func(s string) error {
		t, err := strconv.ParseFloat(s, 64)
		if err != nil || t < 0 {
			return errors.New("want a number such as 0.7")
		}
		f.temperature = &t
		return nil
	})
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "")
	fs.Func("reasoning", "", func(s string) error {
		r := runlet.Reasoning{Effort: runlet.ReasoningEffort(s)}
		if s == "" || r.Validate() != nil {
			return errors.New("want low, medium or high")
		}
		f.reasoning.Effort = r.Effort
		return nil
	})
	fs.Func("reasoning-budget", "", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return errors.New("want a positive number of tokens, such as 2048")
		}
		f.reasoning.BudgetTokens = n
		return nil
	})
	fs.StringVar(&f.session, "session", "", "")
	fs.StringVar(&f.store, "store", "", "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.BoolVar(&f.quiet, "quiet", false, "")
	fs.BoolVar(&f.noReasoning, "no-reasoning", false, "")
	fs.BoolVar(&f.usage, "usage", false, "")
	fs.StringVar(&f.record, "record", "", "")
	fs.StringVar(&f.replay, "replay", "", "")
	fs.StringVar(&f.outputSchema, "output-schema", "", "")
	return fs
}

// parseArgs parses flags anywhere among the arguments (flag stops at the
// first non-flag), returning the positional ones. After "--" everything is
// positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, withFlagHint(fs, err)
		}
		consumed := len(args) - fs.NArg()
		rest := fs.Args()
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// withFlagHint adds to an unknown flag's error the flag it probably meant:
// flag provided but not defined: -modle; did you mean --model?
func withFlagHint(fs *flag.FlagSet, err error) error {
	const unknown = "flag provided but not defined: "
	name, ok := strings.CutPrefix(err.Error(), unknown)
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if best := suggest.Closest(strings.TrimLeft(name, "-"), names); best != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, best)
	}
	return err
}

// validate checks flag combinations.
func (f *flags) validate() error {
	switch {
	case f.json && f.quiet:
		return errors.New("--json and --quiet cannot be combined")
	case f.record != "" && f.replay != "":
		return errors.New("--record and --replay cannot be combined")
	case f.maxTurns < 0:
		return errors.New("--max-turns must not be negative")
	case f.maxTokens < 0:
		return errors.New("--max-tokens must not be negative")
	}
	return nil
}

// shapingFlags lists the flags given that shape the model's requests
// (--config, --model, --system, ...): what a recorded session cannot honour.
func (f *flags) shapingFlags() []string {
	var set []string
	for _, x := range []struct {
		name string
		set  bool
	}{
		{"--config", f.config != ""},
		{"--model", f.model != ""},
		{"--system", f.system != ""},
		{"--option", len(f.options) > 0},
		{"--temperature", f.temperature != nil},
		{"--max-tokens", f.maxTokens > 0},
		{"--reasoning", f.reasoning.Effort != ""},
		{"--reasoning-budget", f.reasoning.BudgetTokens > 0},
		{"--tool", len(f.tools) > 0},
		{"--hosted", len(f.hosted) > 0},
	} {
		if x.set {
			set = append(set, x.name)
		}
	}
	return set
}

// offline refuses, before any call, the flags the bundled recording cannot
// answer: it holds one plain-text answer to one question.
func (f *flags) offline() error {
	const live = "set OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or OPENAI_BASE_URL, or pass --provider or --config"
	switch {
	case f.record != "":
		return usagef("--record needs a live model: %s", live)
	case f.outputSchema != "":
		return usagef("--output-schema needs a live model: the offline recording answers its one question in plain text, not JSON for your schema; %s", live)
	}
	return nil
}

// optionsFlag collects --option key=value.
type optionsFlag map[string]any

func (o optionsFlag) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, o[k]))
	}
	return strings.Join(parts, " ")
}

func (o optionsFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	var x any
	if err := json.Unmarshal([]byte(v), &x); err == nil {
		o[k] = x
	} else {
		o[k] = v
	}
	return nil
}

// listFlag collects a repeatable string flag; commas separate values too.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}
