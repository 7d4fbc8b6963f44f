package config_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/runlet/runlet/config"
)

// Decode never panics nor hangs, every problem it reports is a positioned
// *config.Error, and what it decodes is bounded by the file's size: YAML
// aliases (an alias bomb, an alias inside its own anchor) cannot make it
// large, wherever they are. The seed corpus, testdata/fuzz/FuzzDecode,
// holds alias bombs and loops in options, output_schema, lists, nested
// maps and typed fields.
func FuzzDecode(f *testing.F) {
	for _, path := range []string{"testdata/full.yaml", "../examples/config/agent.yaml"} {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"model: {provider: openai, name: m}\n",
		"model:\n  provider: openai\n  name: ${X:-y}\nmax_turns: ${N}\n",
		"a: &x [*x]\n", "model: *y\n", "- 1\n- 2\n", "---\n---\n", "model: {<<: {provider: openai}}\n",
		"tools: [{name: calculator, timeout: 1s}, current_time]\nmodel: {provider: x, name: y}\n",
		"model: {provider: openai, name: m, options: {a: [1, {b: ${X}}]}}\n",
		"model: {provider: openai, name: m, options: {a: &a [x, x], b: &b [*a, *a], c: [*b, *b]}}\n",
		"model: {provider: openai, name: m, options: {a: &a {b: [*a]}}}\n",
		"output_schema: &s {type: object, properties: {a: *s}}\nmodel: {provider: openai, name: m}\n",
	} {
		f.Add([]byte(s))
	}
	l := &config.Loader{AllowEnv: []string{"X", "N"}, LookupEnv: func(k string) (string, bool) {
		if k == "X" {
			return "1", true
		}
		return "", false
	}}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := l.Decode("fuzz.yaml", data)
		if err != nil {
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *config.Error: %v", err, err)
			}
			return
		}
		// Aliases add at most 100,000 values and 1 MiB of text; JSON
		// writes a value in a few bytes and a byte of text in at most 6.
		free, err := json.Marshal([]any{file.Model.Options, file.OutputSchema, file.Model.Settings, file.MCPServers})
		if err != nil {
			t.Fatalf("decoded values do not marshal: %v", err)
		}
		if limit := 8*len(data) + 8<<20; len(free) > limit {
			t.Fatalf("%d bytes of YAML decode to %d bytes of JSON; want at most %d", len(data), len(free), limit)
		}
		if _, err := l.Build(file); err != nil {
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("build error %T is not a *config.Error: %v", err, err)
			}
		}
	})
}

// Eval never panics and never returns a non-finite number.
func FuzzEval(f *testing.F) {
	for _, s := range []string{"1+2*3", "-(2^3)%5", "sqrt(2)/0", "((1)", "1e400", "2^-1074", "pi*e", "--+-1", "log(0)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		_, _ = config.Eval(expr)
	})
}
