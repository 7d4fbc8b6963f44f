package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/runlettest"
)

type echoArgs struct {
	Text string `json:"text"`
}

func echoTool() runlet.Tool {
	return runlet.NewTool("echo", "Echoes its input.", func(_ context.Context, in echoArgs) (string, error) { return in.Text, nil })
}

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadFull(t *testing.T) {
	l := &config.Loader{Tools: config.Tools(echoTool()), LookupEnv: env("TEST_KEY", "k-123"), AllowEnv: []string{"TEST_*"}}
	setup, err := l.Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := setup.File
	temp, topP := 0.5, 0.9
	want := config.Model{
		Provider: "deepseek", Name: "deepseek-chat", BaseURL: "http://127.0.0.1:9/v1", APIKey: "k-123",
		Headers: map[string]string{"X-Title": "runlet-test"}, MaxRetries: new(int),
		Settings: runlet.Settings{Temperature: &temp, TopP: &topP, MaxOutputTokens: 256, StopSequences: []string{"END", "STOP"}},
		Options: map[string]any{
			"reasoning_effort": "low", "seed": int64(7), "ratio": 0.25, "flag": true, "nothing": nil,
			"nested": map[string]any{"a": []any{int64(1), "two", map[string]any{"b": false}}}, "from_env": "k-123",
		},
	}
	if !reflect.DeepEqual(f.Model, want) {
		t.Errorf("model =\n%#v\nwant\n%#v", f.Model, want)
	}
	if f.MaxTurns != 6 || f.Limits != (runlet.UsageLimits{InputTokens: 1000, OutputTokens: 500, TotalTokens: 1500, Requests: 4, ToolCalls: 3}) ||
		f.Context != (config.Context{KeepLastTurns: 3, TokenBudget: 4000}) || f.ToolTimeout != 30*time.Second || f.ToolConcurrency != 2 {
		t.Errorf("file = %+v", f)
	}
	wantTools := []config.ToolRef{{Name: "current_time"}, {Name: "calculator", Timeout: 2 * time.Second}, {Name: "echo", RequireApproval: true}}
	if !reflect.DeepEqual(f.Tools, wantTools) {
		t.Errorf("tools = %+v", f.Tools)
	}

	a := setup.Agent
	if a.Name != "support" || a.Instructions != "Be concise.\nUse tools.\n" || a.MaxTurns != 6 || a.Model == nil {
		t.Errorf("agent = %+v", a)
	}
	if a.Options["reasoning_effort"] != "low" || a.Settings.MaxOutputTokens != 256 {
		t.Errorf("agent options/settings = %v %+v", a.Options, a.Settings)
	}
	var names []string
	for _, tool := range a.Tools {
		names = append(names, tool.Spec().Name)
	}
	if strings.Join(names, ",") != "current_time,calculator,echo" {
		t.Errorf("tools = %v", names)
	}
	pol := runlet.PolicyOf
	if p := pol(a.Tools[1]); p.Timeout != 2*time.Second || p.RequiresApproval {
		t.Errorf("calculator policy = %+v", p)
	}
	if p := pol(a.Tools[2]); !p.RequiresApproval {
		t.Errorf("echo policy = %+v", p)
	}
	if len(setup.RuntimeOptions) != 5 { // limits, 2 preparers, tool timeout, concurrency
		t.Errorf("%d runtime options", len(setup.RuntimeOptions))
	}
}

// The documented example must stay valid, and run end to end against a
// fake server: the config's options and settings reach the wire.
func TestExampleConfigRuns(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "It is noon."})
	defer srv.Close()
	l := &config.Loader{LookupEnv: env("OPENAI_BASE_URL", srv.BaseURL(), "OPENAI_API_KEY", "test-key"), AllowEnv: []string{"RUNLET_MODEL"}}
	setup, err := l.Load("../examples/config/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := setup.NewRuntime().Run(t.Context(), setup.Agent, "What time is it?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "It is noon." {
		t.Errorf("output = %q", res.Output)
	}
	body := srv.Requests()[0].JSON()
	if body["model"] != "gpt-4o-mini" || body["temperature"] != 0.2 || body["parallel_tool_calls"] != true {
		t.Errorf("request = %v", body)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("auth header = %q", got)
	}
	tools, _ := json.Marshal(body["tools"])
	if !strings.Contains(string(tools), "current_time") || !strings.Contains(string(tools), "calculator") {
		t.Errorf("tools = %s", tools)
	}
}

func TestProviders(t *testing.T) {
	for _, p := range config.Providers() {
		yaml := "model: {provider: " + p + ", name: m, api_key: k}\n"
		l := &config.Loader{HTTPClient: http.DefaultClient}
		f, err := l.Decode("p.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Build(f); err != nil {
			t.Errorf("provider %s: %v", p, err)
		}
	}
	want := []string{"anthropic", "azure", "azure-responses", "dashscope", "deepseek", "gemini", "gemini-openai", "llamacpp", "ollama", "openai", "openai-responses", "openrouter", "qwen", "vllm"}
	if got := config.Providers(); !reflect.DeepEqual(got, want) {
		t.Errorf("Providers() = %v", got)
	}
}

func TestInvalid(t *testing.T) {
	const model = "model:\n  provider: openai\n  name: gpt-4o-mini\n"
	tests := []struct {
		name, yaml string
		want       string // the whole first error message
	}{
		{"unknown top-level field", model + "max_turn: 3\n",
			`bad.yaml:4:1: max_turn: unknown field; did you mean "max_turns"? (known here: context, guardrails, hosted_tools, instructions, limits, max_turns, mcp_servers, model, name, output_schema, prices, store, tool_concurrency, tool_timeout and tools)`},
		{"unknown nested field", "model:\n  provider: openai\n  nmae: x\n",
			`bad.yaml:3:3: model.nmae: unknown field; did you mean "name"? (known in model: allow_insecure_http, api_key, api_version, base_url, deployment, headers, location, max_retries, name, options, project, provider, region, settings and stream_idle_timeout)`},
		{"unknown settings field", model + "  settings:\n    temprature: 1\n",
			`bad.yaml:5:5: model.settings.temprature: unknown field; did you mean "temperature"? (known in model.settings: max_output_tokens, reasoning, stop_sequences, temperature and top_p)`},
		{"bad reasoning effort", model + "  settings:\n    reasoning: {effort: hihg}\n",
			`bad.yaml:5:25: model.settings.reasoning.effort: reasoning effort "hihg": want "low", "medium" or "high"`},
		{"wrong type int", model + "max_turns: ten\n",
			`bad.yaml:4:12: max_turns: want an integer, got "ten"`},
		{"wrong type float", model + "  settings:\n    temperature: hot\n",
			`bad.yaml:5:18: model.settings.temperature: want a number, got "hot"`},
		{"wrong type list", model + "tools: current_time\n",
			`bad.yaml:4:8: tools: want a list (such as [a, b] or one "- item" per line), got "current_time"`},
		{"wrong type mapping", "model: openai\n",
			`bad.yaml:1:8: model: want a mapping of key: value lines, got "openai"`},
		{"wrong type duration", model + "tool_timeout: 30\n",
			`bad.yaml:4:15: tool_timeout: want a duration such as 30s or 2m, got 30`},
		{"wrong type bool", model + "tools:\n  - {name: calculator, require_approval: maybe}\n",
			`bad.yaml:5:42: tools.0.require_approval: want true or false, got "maybe"`},
		{"unknown provider", "model:\n  provider: openia\n  name: x\n",
			`bad.yaml:2:13: model.provider: unknown provider "openia"; did you mean "openai"? (known: anthropic, azure, azure-responses, bedrock, dashscope, deepseek, gemini, gemini-openai, llamacpp, ollama, openai, openai-responses, openrouter, qwen, vertex and vllm)`},
		{"unknown tool", model + "tools: [current_time, calculater]\n",
			`bad.yaml:4:23: tools.1: unknown tool "calculater"; did you mean "calculator"? (available: calculator, current_time and echo)`},
		{"unset variable", "model:\n  provider: openai\n  name: x\n  api_key: ${NOPE_KEY}\n",
			`bad.yaml:4:12: model.api_key: environment variable NOPE_KEY is not set; set it (export NOPE_KEY=...) or give a default: ${NOPE_KEY:-default}`},
		{"required variable message", "model:\n  provider: openai\n  name: ${M:?set M to a model name}\n",
			`bad.yaml:3:9: model.name: environment variable M: set M to a model name`},
		{"bad reference", "model:\n  provider: openai\n  name: ${1X}\n",
			`bad.yaml:3:9: model.name: bad variable name "1X" in ${1X}; names are letters, digits and _, not starting with a digit`},
		{"unterminated reference", "model:\n  provider: openai\n  name: ${X\n",
			`bad.yaml:3:9: model.name: unterminated ${ in "${X"; close it with }, or write $${ for a literal ${`},
		{"missing model", "name: x\n",
			"bad.yaml: model: required; add a model section:\n    model:\n      provider: openai\n      name: gpt-4o-mini"},
		{"missing name", "model:\n  provider: openai\n",
			`bad.yaml:2:3: model: model.name is required, such as gpt-4o-mini or claude-sonnet-4-5`},
		{"negative", model + "max_turns: -1\n",
			`bad.yaml:4:12: max_turns: must not be negative, got -1`},
		{"duplicate key", model + "name: a\nname: b\n",
			`bad.yaml:5:1: name: duplicate key; each field may appear once`},
		{"duplicate tool", model + "tools: [calculator, calculator]\n",
			`bad.yaml:4:21: tools.1: tool "calculator" is listed twice`},
		{"syntax error", model + "name: a: b\n",
			`bad.yaml:4: YAML syntax: mapping values are not allowed in this context`},
		{"empty", "", `bad.yaml: the file is empty; it needs at least a model section`},
		{"two documents", model + "---\nname: x\n", `bad.yaml:4:1: a second YAML document (after ---); a config file holds one`},
		{"expanded value never shown", model + "max_turns: ${SECRET}\n",
			`bad.yaml:4:12: max_turns: want an integer, got "${SECRET}" (after expanding variables)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &config.Loader{Tools: config.Tools(echoTool()), LookupEnv: env("SECRET", "sk-very-secret"), AllowEnv: []string{"M", "SECRET"}}
			f, err := l.Decode("bad.yaml", []byte(tt.yaml))
			if err == nil {
				_, err = l.Build(f)
			}
			if err == nil {
				t.Fatal("no error")
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *config.Error: %v", err, err)
			}
			if ce.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", ce.Error(), tt.want)
			}
			if strings.Contains(err.Error(), "sk-very-secret") {
				t.Error("a variable's value leaked into the error")
			}
		})
	}
}

// Several problems are reported together.
func TestInvalidReportsAll(t *testing.T) {
	_, err := (&config.Loader{}).Decode("x.yaml", []byte("model:\n  provider: openai\n  name: m\n  colour: red\nmax_turns: x\nlimits: {requests: many}\n"))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "x.yaml:4:3:") || !strings.HasPrefix(lines[1], "x.yaml:5:12:") || !strings.HasPrefix(lines[2], "x.yaml:6:20:") {
		t.Errorf("errors:\n%s", err)
	}
}

// Every kind of problem comes in one pass: decoding (an unset variable, an
// unknown field), ranges, and names (an unknown tool or provider, an
// invalid output schema), so fixing one does not reveal the next. A field
// whose value did not decode is not also reported as missing.
func TestOneRound(t *testing.T) {
	l := &config.Loader{LookupEnv: func(string) (string, bool) { return "", false }}
	_, err := l.Decode("x.yaml", []byte(`model:
  provider: openai
  name: m
  api_key: ${UNSET_KEY}
tools: [calculater, current_time, current_time]
mcp_servers:
  - {name: docs, url: "${UNSET_URL}"}
max_turns: -1
max_turn: 3
output_schema: {type: objekt}
`))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		"x.yaml:4:12: model.api_key: environment variable UNSET_KEY is not set",
		"x.yaml:7:23: mcp_servers.0.url: environment variable UNSET_URL is not set",
		"x.yaml:9:1: max_turn: unknown field",
		"x.yaml:8:12: max_turns: must not be negative, got -1",
		`x.yaml:5:9: tools.0: unknown tool "calculater"; did you mean "calculator"?`,
		`x.yaml:5:35: tools.2: tool "current_time" is listed twice`,
		`x.yaml:10:16: output_schema: invalid JSON Schema: type: unknown type "objekt"; did you mean "object"?`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Errorf("%d errors, want %d:\n%s", len(lines), len(want), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("lacks %q:\n%s", w, err)
		}
	}

	// The provider, unknown or from an unset variable: reported once.
	_, err = l.Decode("y.yaml", []byte("model: {provider: antropic, name: m}\ntools: [nope]\n"))
	if err == nil || !strings.Contains(err.Error(), `y.yaml:1:19: model.provider: unknown provider "antropic"; did you mean "anthropic"?`) ||
		!strings.Contains(err.Error(), `y.yaml:2:9: tools.0: unknown tool "nope"`) {
		t.Errorf("err = %v", err)
	}
	_, err = l.Decode("z.yaml", []byte("model: {provider: \"${UNSET_P}\", name: m}\n"))
	if err == nil || strings.Contains(err.Error(), "required") || strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("err = %v", err)
	}
}

// A Build error for a value changed after Decode (as the CLI's flags do)
// has no position in the file.
func TestBuildAfterOverride(t *testing.T) {
	l := &config.Loader{}
	f, err := l.Decode("a.yaml", []byte("model:\n  provider: openai\n  name: m\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.Model.Provider = "nope"
	_, err = l.Build(f)
	if err == nil || !strings.HasPrefix(err.Error(), `a.yaml: model.provider: unknown provider "nope"`) {
		t.Errorf("err = %v", err)
	}
	var hand config.File
	hand.Model = config.Model{Provider: "openia", Name: "m"}
	if _, err := l.Build(&hand); err == nil || !strings.HasPrefix(err.Error(), `model.provider: unknown provider "openia"; did you mean "openai"?`) {
		t.Errorf("err = %v", err)
	}
}

func TestEnvSuggestion(t *testing.T) {
	t.Setenv("RUNLET_TEST_API_KEY", "x")
	_, err := (&config.Loader{}).Decode("e.yaml", []byte("model:\n  provider: openai\n  name: m\n  api_key: ${RUNLET_TEST_APIKEY}\n"))
	if err == nil || !strings.Contains(err.Error(), "did you mean RUNLET_TEST_API_KEY (which is set)?") {
		t.Errorf("err = %v", err)
	}
}

func TestVariables(t *testing.T) {
	lookup := env("SET", "v", "EMPTY", "")
	tests := []struct{ in, want string }{
		{"${SET}", "v"},
		{"a-${SET}-b", "a-v-b"},
		{"${UNSET:-d}", "d"},
		{"${EMPTY:-d}", "d"},
		{"${EMPTY-d}", ""},
		{"${UNSET-d}", "d"},
		{"$$HOME", "$HOME"},
		{"$${SET}", "${SET}"},
		{"cost: $5", "cost: $5"},
		{"${SET:-x:y}", "v"},
		{"${UNSET:-x:y}", "x:y"},
	}
	for _, tt := range tests {
		f, err := (&config.Loader{LookupEnv: lookup, AllowEnv: []string{"SET", "EMPTY", "UNSET"}}).Decode("v.yaml", []byte("model: {provider: openai, name: m}\ninstructions: '"+tt.in+"'\n"))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if f.Instructions != tt.want {
			t.Errorf("%s = %q, want %q", tt.in, f.Instructions, tt.want)
		}
	}
	// Unquoted values are typed after expansion; quoted ones stay strings.
	f, err := (&config.Loader{LookupEnv: env("N", "12"), AllowEnv: []string{"N"}}).Decode("v.yaml", []byte("model:\n  provider: openai\n  name: '${N}'\n  options:\n    a: ${N}\n    b: \"${N}\"\nmax_turns: ${N}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.MaxTurns != 12 || f.Model.Name != "12" || f.Model.Options["a"] != int64(12) || f.Model.Options["b"] != "12" {
		t.Errorf("typed expansion: %+v", f)
	}
}

func TestAnchorsAndNulls(t *testing.T) {
	y := "defaults: &d\n" // unknown field: anchors need a known home
	_, err := (&config.Loader{}).Decode("a.yaml", []byte(y+"model: {provider: openai, name: m}\n"))
	if err == nil {
		t.Error("unknown field with anchor accepted")
	}
	f, err := (&config.Loader{}).Decode("a.yaml", []byte("model:\n  provider: openai\n  name: &n gpt\n  base_url:\ninstructions: *n\nlimits: ~\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Instructions != "gpt" || f.Model.BaseURL != "" {
		t.Errorf("f = %+v", f)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := config.Load(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}

func TestEval(t *testing.T) {
	ok := map[string]float64{
		"1+2*3": 7, "(1+2)*3": 9, "2^3^2": 512, "-2^2": -4, "10 % 4": 2, "7/2": 3.5,
		"sqrt(16) + abs(-2)": 6, "1e3 + 1_000": 2000, "round(2.5)": 3, "2*pi": 2 * 3.141592653589793,
		"--3": 3, " ( ( 4 ) ) ": 4, "log(1000)": 3,
	}
	for expr, want := range ok {
		got, err := config.Eval(expr)
		if err != nil || got != want {
			t.Errorf("Eval(%q) = %v, %v; want %v", expr, got, err, want)
		}
	}
	bad := map[string]string{
		"1/0": "division by zero", "1+": "unexpected end", "(1": "missing )", "foo(1)": `unknown name "foo"`,
		"sqrt 2": "needs an argument", "1 2": `unexpected "2"`, "2^2000": "not a finite number",
		strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200): "nested too deeply",
		strings.Repeat("1+", 600) + "1":                           "too long", "$": `unexpected "$"`,
	}
	for expr, want := range bad {
		if _, err := config.Eval(expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Eval(%.20q) err = %v, want %q", expr, err, want)
		}
	}
}

func TestBuiltins(t *testing.T) {
	b := config.Builtins()
	out, err := b["calculator"].Call(t.Context(), json.RawMessage(`{"expression":"(2+3)*4"}`))
	if err != nil || out != "20" {
		t.Errorf("calculator = %q, %v", out, err)
	}
	out, err = b["current_time"].Call(t.Context(), json.RawMessage(`{"timezone":"UTC"}`))
	if err != nil || !strings.Contains(out, "UTC") {
		t.Errorf("current_time = %q, %v", out, err)
	}
	if _, err := time.Parse(time.RFC3339, strings.Fields(out)[0]); err != nil {
		t.Errorf("current_time output %q: %v", out, err)
	}
	if _, err := b["current_time"].Call(t.Context(), json.RawMessage(`{"timezone":"Mars/Olympus"}`)); err == nil {
		t.Error("unknown time zone accepted")
	}
}

// The format documented in the package doc is a valid config.
func TestDocFormatIsValid(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "// # Format\n//\n")
	if !ok {
		t.Fatal("no # Format section in doc.go")
	}
	var yaml strings.Builder
	for line := range strings.Lines(after) {
		if !strings.HasPrefix(line, "//\t") {
			break
		}
		yaml.WriteString(strings.TrimPrefix(line, "//\t"))
	}
	weather := runlet.NewTool("get_weather", "w", func(_ context.Context, in echoArgs) (string, error) { return "", nil })
	type serperParams struct {
		APIKey string `yaml:"api_key" config:"credential"`
		Type   string `yaml:"type"`
	}
	serper := config.Factory(func(name string, p serperParams) (runlet.Tool, error) {
		return runlet.NewTool(name, "s", func(context.Context, struct{}) (string, error) { return p.Type, nil }), nil
	})
	l := &config.Loader{Tools: config.Tools(weather), Factories: map[string]config.ToolFactory{"serper": serper},
		LookupEnv: env("OPENAI_API_KEY", "k", "GITHUB_TOKEN", "t", "SERPER_API_KEY", "s")}
	f, err := l.Decode("doc.go", []byte(yaml.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml.String())
	}
	if _, err := l.Build(f); err != nil {
		t.Fatal(err)
	}
	if f.Model.Settings.StopSequences[0] != "\n\n" || f.Tools[2].Timeout != 10*time.Second {
		t.Errorf("decoded %+v", f)
	}
}

// model.settings.reasoning is the provider-neutral reasoning setting.
func TestReasoningSetting(t *testing.T) {
	l := &config.Loader{Tools: config.Tools(echoTool())}
	f, err := l.Decode("r.yaml", []byte("model:\n  provider: anthropic\n  name: claude-sonnet-4-5\n  api_key: k\n"+
		"  settings:\n    reasoning: {effort: high, budget_tokens: 2048, summary: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	want := runlet.Reasoning{Effort: runlet.ReasoningHigh, BudgetTokens: 2048, Summary: true}
	if got := s.Agent.Settings.Reasoning; got != want {
		t.Fatalf("reasoning %+v, want %+v", got, want)
	}
}
