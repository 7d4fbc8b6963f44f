package config_test

import (
	"errors"
	"os"
	"testing"

	"github.com/runlet/runlet/config"
)

// Decode never panics, and every problem it reports is a positioned
// *config.Error.
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
	} {
		f.Add([]byte(s))
	}
	l := &config.Loader{LookupEnv: func(k string) (string, bool) {
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
