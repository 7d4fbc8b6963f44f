package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/demo"
	"github.com/runlet/runlet/runlettest"
)

const recordedAnswer = "The capital of the UK is London."

// With nothing configured, run replays the bundled session and says so.
func TestReplayDefault(t *testing.T) {
	r := runCLI(t, "", nil, "run", "What is the capital of the UK?")
	if r.code != 0 || r.stdout != recordedAnswer+"\n" {
		t.Fatalf("%s", r)
	}
	for _, want := range []string{
		"REPLAY of a recorded session", "your prompt is not sent anywhere", demo.Question,
		`→ get_capital {"country":"UK"}`, "← get_capital: London",
		"2 model calls · 131 input + 24 output tokens · 1 tool call",
		"export OPENAI_API_KEY=", "export ANTHROPIC_API_KEY=", "OPENAI_BASE_URL=http://localhost:11434/v1",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "\x1b[") {
		t.Error("escape codes written to a pipe")
	}

	// The recorded question itself: no "not sent" note; from stdin too.
	r = runCLI(t, demo.Question+"\n", nil, "run")
	if r.code != 0 || r.stdout != recordedAnswer+"\n" || strings.Contains(r.stderr, "not sent anywhere") {
		t.Fatalf("%s", r)
	}
}

func TestJSONMode(t *testing.T) {
	r := runCLI(t, "", nil, "run", "--json", "What is the capital of the UK?")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	terminal := 0
	var types []string
	for i, line := range lines {
		ev, err := runlet.UnmarshalEvent([]byte(line))
		if err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", i+1, err, line)
		}
		if ev.Header().Seq != int64(i+1) {
			t.Errorf("line %d has seq %d", i+1, ev.Header().Seq)
		}
		types = append(types, ev.Header().Type)
		switch e := ev.(type) {
		case *runlet.RunFinished:
			terminal++
			if e.Result.Output != recordedAnswer {
				t.Errorf("output %q", e.Result.Output)
			}
		case *runlet.RunFailed, *runlet.RunInterrupted:
			terminal++
		}
	}
	if terminal != 1 || types[0] != "run.started" || types[len(types)-1] != "run.finished" {
		t.Errorf("%d terminal events; types %v", terminal, types)
	}
	for _, want := range []string{"text.delta", "tool_call.delta", "tool.started", "tool.finished", "model.finished"} {
		if !strings.Contains(strings.Join(types, " "), want) {
			t.Errorf("no %s event", want)
		}
	}
}

// A live tool run against the fake Gemini API.
func TestGeminiLive(t *testing.T) {
	srv := runlettest.NewGeminiServer(
		runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{runlettest.GeminiCall("", "calculator", `{"expression":"6*7"}`)}},
		runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{runlettest.GeminiText("42.")}},
	)
	defer srv.Close()
	srv.RequireAPIKey("gk")
	r := runCLI(t, "", []string{"GEMINI_API_KEY=gk"}, "run", "--provider", "gemini", "--base-url", srv.BaseURL(), "--model", "gemini-3-flash-preview",
		"--tool", "calculator", "--option", "thinking_level=low", "What is 6*7?")
	if r.code != 0 || r.stdout != "42.\n" {
		t.Fatalf("%s", r)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.HasSuffix(reqs[0].Path, "/models/gemini-3-flash-preview:streamGenerateContent") ||
		!strings.Contains(string(reqs[0].Body), `"thinkingLevel":"low"`) {
		t.Errorf("requests %+v", reqs)
	}
}

// A live run against a fake OpenAI-compatible server: text streamed to
// stdout, reasoning and tools on stderr.
func TestTextModeLive(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{Reasoning: "I should compute.", ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "calculator", Arguments: `{"expression":"6*7"}`}}},
		runlettest.OpenAIChatReply{Text: "6 × 7 = 42."},
	)
	defer srv.Close()
	r := runCLI(t, "", nil, "run", "--base-url", srv.BaseURL(), "--model", "local-model", "--tool", "calculator",
		"--system", "Be brief.", "--option", "seed=7", "--option", "reasoning_effort=low", "--temperature", "0.3", "What is 6*7?")
	if r.code != 0 || r.stdout != "6 × 7 = 42.\n" {
		t.Fatalf("%s", r)
	}
	for _, want := range []string{"I should compute.", `→ calculator {"expression":"6*7"}`, "← calculator: 42", "2 model calls"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "REPLAY") {
		t.Error("a live run claims to be a replay")
	}
	body := srv.Requests()[0].JSON()
	msgs, _ := json.Marshal(body["messages"])
	if body["model"] != "local-model" || body["seed"] != 7.0 || body["reasoning_effort"] != "low" || body["temperature"] != 0.3 ||
		!strings.Contains(string(msgs), `"Be brief."`) {
		t.Errorf("request = %v", body)
	}

	// --no-reasoning hides it; --quiet prints only the answer.
	srv.Enqueue(runlettest.OpenAIChatReply{Reasoning: "secret thoughts", Text: "Hi."}, runlettest.OpenAIChatReply{Text: "Hello."})
	r = runCLI(t, "", nil, "run", "--base-url", srv.BaseURL(), "--model", "m", "--no-reasoning", "hi")
	if r.code != 0 || strings.Contains(r.stderr, "secret thoughts") || r.stdout != "Hi.\n" {
		t.Errorf("--no-reasoning: %s", r)
	}
	r = runCLI(t, "", nil, "run", "--base-url", srv.BaseURL(), "--model", "m", "--quiet", "hi")
	if r.code != 0 || r.stdout != "Hello.\n" || r.stderr != "" {
		t.Errorf("--quiet: %s", r)
	}
}

func TestStdinPrompt(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Got it."})
	defer srv.Close()
	r := runCLI(t, "  Summarise this:\nline two\n", []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "RUNLET_MODEL=m"}, "run")
	if r.code != 0 || r.stdout != "Got it.\n" {
		t.Fatalf("%s", r)
	}
	msgs, _ := json.Marshal(srv.Requests()[0].JSON()["messages"])
	if !strings.Contains(string(msgs), `"Summarise this:\nline two"`) {
		t.Errorf("messages = %s", msgs)
	}
}

func TestBadUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("model:\n  provider: openai\n  name: m\n  api_key: ${RUNLET_TEST_UNSET}\nmax_turn: 3\ntools: [calculater]\n"), 0o644)
	huge := filepath.Join(dir, "huge.yaml")
	os.WriteFile(huge, []byte("model: {provider: openai, name: m}\n#"+strings.Repeat("x", 2<<20)+"\n"), 0o644)
	bomb := filepath.Join(dir, "bomb.yaml")
	os.WriteFile(bomb, []byte("model:\n  provider: openai\n  name: m\n  options:\n    a: &a [x, x, x, x, x, x, x, x, x, x]\n    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"+
		"    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"+
		"    f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"), 0o644) // a million values: more than a config may expand, few enough to measure before the fix
	badSchema := filepath.Join(dir, "schema.json")
	os.WriteFile(badSchema, []byte(`{"type":"object","properties":{"age":{"type":"integr"}}}`), 0o644)
	tests := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"unknown flag", nil, []string{"run", "--bogus", "x"}, []string{"flag provided but not defined: -bogus", `Run "runlet run --help" for usage.`}},
		{"bad flag value", nil, []string{"run", "--max-turns", "many", "x"}, []string{`invalid value "many"`, `Run "runlet run --help" for usage.`}},
		{"json and quiet", nil, []string{"run", "--json", "--quiet", "x"}, []string{"--json and --quiet cannot be combined"}},
		{"bad option", nil, []string{"run", "--option", "novalue", "x"}, []string{`want KEY=VALUE, got "novalue"`}},
		{"chat with argument", nil, []string{"chat", "hello"}, []string{"chat reads prompts from standard input", `Run "runlet chat --help" for usage.`}},
		{"chat bad flag", nil, []string{"chat", "--sesion", "x"}, []string{"flag provided but not defined: -sesion; did you mean --session?", `Run "runlet chat --help" for usage.`}},
		{"flag typo", nil, []string{"run", "--modle", "m", "x"}, []string{"flag provided but not defined: -modle; did you mean --model?"}},
		{"mcp serve flag typo", nil, []string{"mcp", "serve", "--htp", "127.0.0.1:0"}, []string{"flag provided but not defined: -htp; did you mean --http?", `Run "runlet mcp serve --help" for usage.`}},
		{"invalid output schema", []string{"OPENAI_API_KEY=k"}, []string{"run", "--output-schema", badSchema, "x"}, []string{
			"--output-schema: " + badSchema + `: invalid JSON Schema: properties.age.type: unknown type "integr"; did you mean "integer"?`}},
		{"invalid output schema offline", nil, []string{"run", "--output-schema", badSchema, "x"}, []string{`unknown type "integr"`}},
		{"no command", nil, nil, []string{"Usage:", "runlet run [flags] [prompt]"}},
		{"unknown command", nil, []string{"rnu"}, []string{`unknown command "rnu"; did you mean "run"?`}},
		{"unknown provider", nil, []string{"run", "--provider", "antropic", "x"}, []string{`unknown provider "antropic"; did you mean "anthropic"?`}},
		// The CLI and the config suggest alike (one suggester): case is no typo.
		{"unknown provider, capitals", nil, []string{"run", "--provider", "ANTHROPIC", "x"}, []string{`unknown provider "ANTHROPIC"; did you mean "anthropic"?`}},
		{"unknown command, hint", nil, []string{"cht"}, []string{`unknown command "cht"; did you mean "chat"?`, `Run "runlet help" for usage.`}},
		{"missing key", nil, []string{"run", "--provider", "anthropic", "x"}, []string{"ANTHROPIC_API_KEY is not set"}},
		{"missing gemini key", nil, []string{"run", "--provider", "gemini", "x"}, []string{"GEMINI_API_KEY is not set"}},
		{"missing model", nil, []string{"run", "--provider", "ollama", "x"}, []string{"no model name for provider ollama: pass --model"}},
		// The documented default is OpenAI's model; another server's models are its own.
		{"base URL without model", []string{"OPENAI_BASE_URL=http://127.0.0.1:9/v1"}, []string{"run", "x"}, []string{
			"no model name: OPENAI_BASE_URL points at http://127.0.0.1:9/v1, a server whose models runlet cannot guess (gpt-4o-mini is the default for openai's own API only): pass --model"}},
		{"base URL flag without model", nil, []string{"run", "--base-url", "http://127.0.0.1:9/v1", "x"}, []string{"no model name: --base-url points at http://127.0.0.1:9/v1"}},
		{"unknown tool", []string{"OPENAI_API_KEY=k"}, []string{"run", "--tool", "calculater", "x"}, []string{`unknown tool "calculater"; did you mean "calculator"?`}},
		{"no prompt", []string{"OPENAI_API_KEY=k"}, []string{"run"}, []string{"no prompt"}},
		{"missing config", nil, []string{"run", "--config", filepath.Join(dir, "nope.yaml"), "x"}, []string{"--config:", "no such file"}},
		{"bad config", nil, []string{"run", "--config", bad, "x"}, []string{
			bad + ":4:12: model.api_key: environment variable RUNLET_TEST_UNSET is not set",
			bad + `:5:1: max_turn: unknown field; did you mean "max_turns"?`,
			bad + `:6:9: tools.0: unknown tool "calculater"; did you mean "calculator"?`}}, // in the same pass
		{"config too large", nil, []string{"run", "--config", huge, "x"}, []string{huge + ": the file is larger than 1048576 bytes"}},
		{"alias bomb", nil, []string{"run", "--config", bomb, "x"}, []string{bomb + ":", "(an alias bomb?)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "", tt.env, tt.args...)
			if r.code != 2 || r.stdout != "" {
				t.Fatalf("want exit 2 and no stdout; %s", r)
			}
			// An error is one line (or one per config problem) and a hint,
			// not the whole help, which would bury it.
			if tt.args != nil && (strings.Contains(r.stderr, "Usage:") || strings.Contains(r.stderr, "Examples:")) {
				t.Errorf("the error is buried in the help text\n%s", r)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q\n%s", w, r)
				}
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"run", "--help"}, {"help", "run"}, {"chat", "-h"}, {"help"}, {"--help"}} {
		r := runCLI(t, "", nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") || !strings.Contains(r.stdout, "xit codes") {
			t.Errorf("%v: %s", args, r)
		}
	}
	r := runCLI(t, "", nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "runlet ") || !strings.Contains(r.stdout, "go1.") {
		t.Errorf("version: %s", r)
	}
}

// Ctrl-C cancels the run promptly: the stalled HTTP stream is closed and
// the exit code is 130.
func TestInterrupt(t *testing.T) {
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	closed := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		got <- struct{}{}
		select {
		case <-r.Context().Done():
			closed <- struct{}{}
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)

	cmd := exec.Command(bin, "run", "--base-url", srv.URL+"/v1", "--model", "m", "hello")
	cmd.Env = cleanEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		cmd.Process.Kill()
		t.Fatal("the request never arrived")
	}
	cmd.Process.Signal(syscall.SIGINT)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 130 {
			t.Errorf("exit: %v (want 130)\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		cmd.Process.Kill()
		<-waited
		t.Fatal("runlet did not stop within 5s of SIGINT")
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr: %s", stderr.String())
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Error("the HTTP stream was not closed")
	}
}

// At the chat prompt (no run going), Ctrl-C quits at once.
func TestInterruptChatIdle(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer()
	defer srv.Close()
	cmd := exec.Command(bin, "chat", "--base-url", srv.BaseURL(), "--model", "m")
	cmd.Env = cleanEnv(t)
	stdin, _ := cmd.StdinPipe() // never written: chat waits for a line
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let it install its signal handler
	cmd.Process.Signal(syscall.SIGINT)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		ee, ok := err.(*exec.ExitError)
		// Under heavy load the signal may beat the handler's installation;
		// then the default action (death by SIGINT) is the right outcome too.
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || (ee.ExitCode() != 130 && !(ws.Signaled() && ws.Signal() == syscall.SIGINT)) {
			t.Errorf("exit: %v (want 130)", err)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		cmd.Process.Kill()
		<-waited
		t.Fatal("chat did not quit on SIGINT")
	}
}

func TestChatKeepsHistory(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Hello Ann."}, runlettest.OpenAIChatReply{Text: "You are Ann."})
	defer srv.Close()
	r := runCLI(t, "Hi, I am Ann.\n\nWhat is my name?\n", []string{"OPENAI_BASE_URL=" + srv.BaseURL()}, "chat", "--model", "m")
	if r.code != 0 || r.stdout != "Hello Ann.\nYou are Ann.\n" {
		t.Fatalf("%s", r)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs, _ := json.Marshal(reqs[1].JSON()["messages"])
	for _, want := range []string{"Hi, I am Ann.", "Hello Ann.", "What is my name?"} {
		if !strings.Contains(string(msgs), want) {
			t.Errorf("second request lacks %q: %s", want, msgs)
		}
	}
}

func TestChatReplayDefault(t *testing.T) {
	r := runCLI(t, "hello there\nand again\n", nil, "chat")
	if r.code != 0 || r.stdout != recordedAnswer+"\n" {
		t.Fatalf("%s", r)
	}
	for _, want := range []string{"REPLAY", "the recording has ended", "export OPENAI_API_KEY="} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
	}
}

// --session keeps history on disk across processes.
func TestSessionAcrossRuns(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Noted: 3pm."}, runlettest.OpenAIChatReply{Text: "At 3pm."})
	defer srv.Close()
	store := filepath.Join(t.TempDir(), "s.db")
	env := []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "RUNLET_MODEL=m"}
	if r := runCLI(t, "", env, "run", "--session", "notes", "--store", store, "The meeting is at 3pm."); r.code != 0 {
		t.Fatalf("%s", r)
	}
	if r := runCLI(t, "", env, "run", "--session", "notes", "--store", store, "When is the meeting?"); r.code != 0 || r.stdout != "At 3pm.\n" {
		t.Fatalf("%s", r)
	}
	msgs, _ := json.Marshal(srv.Requests()[1].JSON()["messages"])
	if !strings.Contains(string(msgs), "The meeting is at 3pm.") || !strings.Contains(string(msgs), "Noted: 3pm.") {
		t.Errorf("second run did not see the session: %s", msgs)
	}
	// The default store lives in the user cache directory.
	cache := t.TempDir()
	srv.Enqueue(runlettest.OpenAIChatReply{Text: "ok"})
	if r := runCLI(t, "", append(env, "XDG_CACHE_HOME="+cache), "run", "--session", "x", "hi"); r.code != 0 {
		t.Fatalf("%s", r)
	}
	if _, err := os.Stat(filepath.Join(cache, "runlet", "sessions.db")); err != nil {
		t.Errorf("default store: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	loop := runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "calculator", Arguments: `{"expression":"1+1"}`}}}
	srv := runlettest.NewOpenAIChatServer()
	defer srv.Close()
	env := []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "RUNLET_MODEL=m", "OPENAI_API_KEY=sk-SECRET-do-not-print"}

	srv.Enqueue(loop, loop)
	r := runCLI(t, "", env, "run", "--tool", "calculator", "--max-turns", "2", "loop")
	if r.code != 3 || !strings.Contains(r.stderr, "max turns") {
		t.Errorf("max turns: %s", r)
	}

	srv.RequireAPIKey("another-key")
	r = runCLI(t, "", append(env, "RUNLET_TEST=1"), "run", "--option", "max_tokens_field=max_tokens", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "HTTP 401") || !strings.Contains(r.stderr, "check the API key") {
		t.Errorf("provider error: %s", r)
	}
	if strings.Contains(r.stdout+r.stderr, "SECRET") {
		t.Error("the API key was printed")
	}

	// chat exits with the code of its last prompt.
	r = runCLI(t, "hi\n", env, "chat")
	if r.code != 1 || !strings.Contains(r.stderr, "HTTP 401") {
		t.Errorf("chat: %s", r)
	}
}

// A config file may read any variable for a credential, but a variable it
// would show the model only when the user allows it with --allow-env.
func TestConfigAllowEnv(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "ok"}, runlettest.OpenAIChatReply{Text: "ok"})
	defer srv.Close()
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	os.WriteFile(cfg, []byte("model:\n  provider: openai\n  name: m\n  base_url: ${TEST_BASE}\n  api_key: ${TEST_KEY}\n"+
		"instructions: \"Tone: ${APP_TONE}. Also: ${AWS_SECRET_ACCESS_KEY}\"\n"), 0o644)
	env := []string{"TEST_BASE=" + srv.BaseURL(), "TEST_KEY=k", "APP_TONE=terse", "AWS_SECRET_ACCESS_KEY=AKIA-secret-value"}

	r := runCLI(t, "", env, "run", "--config", cfg, "--allow-env", "APP_TONE", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, cfg+":6:15: instructions: reads ${AWS_SECRET_ACCESS_KEY}") ||
		!strings.Contains(r.stderr, "--allow-env AWS_SECRET_ACCESS_KEY") || strings.Contains(r.stderr, "AKIA") || len(srv.Requests()) != 0 {
		t.Fatalf("%s", r)
	}

	r = runCLI(t, "", env, "run", "--config", cfg, "--allow-env", "APP_*,AWS_SECRET_ACCESS_KEY", "hi")
	if r.code != 0 || len(srv.Requests()) != 1 {
		t.Fatalf("%s", r)
	}
	if body := string(srv.Requests()[0].Body); !strings.Contains(body, "Tone: terse. Also: AKIA-secret-value") {
		t.Errorf("request = %s", body)
	}
}

func TestApprovalWithoutTerminal(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "calculator", Arguments: `{"expression":"2+2"}`}}})
	defer srv.Close()
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	os.WriteFile(cfg, []byte("model: {provider: openai, name: m, base_url: "+srv.BaseURL()+"}\ntools:\n  - name: calculator\n    require_approval: true\n"), 0o644)
	r := runCLI(t, "", nil, "run", "--config", cfg, "2+2?")
	if r.code != 4 || !strings.Contains(r.stderr, `waits for approval of: calculator {"expression":"2+2"}`) {
		t.Errorf("%s", r)
	}
}

// --record saves the traffic (without the key); --replay answers from it
// with the server gone.
func TestRecordReplayFlags(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Recorded answer."})
	cassette := filepath.Join(t.TempDir(), "run.cassette.json")
	env := []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=sk-SECRET-key", "RUNLET_MODEL=m"}
	r := runCLI(t, "", env, "run", "--record", cassette, "hi")
	srv.Close()
	if r.code != 0 || !strings.Contains(r.stderr, "recorded 1 request(s)") {
		t.Fatalf("%s", r)
	}
	data, _ := os.ReadFile(cassette)
	if strings.Contains(string(data), "SECRET") {
		t.Error("the cassette holds the API key")
	}
	r = runCLI(t, "", []string{"RUNLET_MODEL=m"}, "run", "--replay", cassette, "hi")
	if r.code != 0 || r.stdout != "Recorded answer.\n" {
		t.Fatalf("%s", r)
	}
	r = runCLI(t, "", []string{"RUNLET_MODEL=m"}, "run", "--replay", cassette, "something else")
	if r.code != 1 || !strings.Contains(r.stderr, `body: messages.0.content: recorded "hi", got "something else"`) {
		t.Errorf("mismatch: %s", r)
	}
}
