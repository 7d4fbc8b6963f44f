package config_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
)

// searchParams are the params of the "search" test factory.
type searchParams struct {
	APIKey  string            `yaml:"api_key" config:"credential"`
	Headers map[string]string `yaml:"headers" config:"credential"`
	Type    string            `yaml:"type"`
	Max     uint8             `yaml:"max"`
	Timeout time.Duration     `yaml:"timeout"`
	Sites   []string          // untagged: the key is "sites"
}

// searchFactory makes tools that answer with their name and params, and
// refuses an unknown type.
func searchFactory() config.ToolFactory {
	return config.Factory(func(name string, p searchParams) (runlet.Tool, error) {
		switch p.Type {
		case "", "web", "news":
		default:
			return nil, fmt.Errorf("unknown type %q (web or news)", p.Type)
		}
		return runlet.NewTool(name, "Searches.", func(context.Context, struct{}) (string, error) {
			return fmt.Sprintf("%s type=%s key=%s max=%d sites=%v", name, p.Type, p.APIKey, p.Max, p.Sites), nil
		}), nil
	})
}

func factoryLoader(kv ...string) *config.Loader {
	return &config.Loader{
		Factories: map[string]config.ToolFactory{"search": searchFactory()},
		LookupEnv: env(kv...),
	}
}

const factoryModel = "model: {provider: openai, name: m, api_key: k}\n"

// One factory makes several configured tools, each from its own params,
// decoded into the factory's Go type; credential fields read any variable.
func TestToolFactoryParams(t *testing.T) {
	yaml := factoryModel + `tools:
  - name: search_news
    use: search
    params:
      api_key: ${SEARCH_KEY}
      type: news
      max: 5
      timeout: 2s
      sites: [a.example, b.example]
  - use: search
    timeout: 3s
  - current_time
`
	l := factoryLoader("SEARCH_KEY", "sk-123")
	f, err := l.Decode("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	want := searchParams{APIKey: "sk-123", Type: "news", Max: 5, Timeout: 2 * time.Second, Sites: []string{"a.example", "b.example"}}
	if p, ok := f.Tools[0].Params.(searchParams); !ok || fmt.Sprint(p.Sites) != fmt.Sprint(want.Sites) || p.APIKey != want.APIKey || p.Max != 5 || p.Timeout != want.Timeout || p.Type != "news" {
		t.Errorf("params = %#v", f.Tools[0].Params)
	}
	if f.Tools[1].Name != "search" || f.Tools[1].Params != nil {
		t.Errorf("second tool = %+v (the name defaults to use)", f.Tools[1])
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range setup.Agent.Tools {
		out, err := tool.Call(t.Context(), []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tool.Spec().Name+": "+out)
	}
	wantOut := []string{
		"search_news: search_news type=news key=sk-123 max=5 sites=[a.example b.example]",
		"search: search type= key= max=0 sites=[]",
	}
	if len(got) != 3 || got[0] != wantOut[0] || got[1] != wantOut[1] {
		t.Errorf("tools answered:\n%s", strings.Join(got, "\n"))
	}
	if p := runlet.PolicyOf(setup.Agent.Tools[1]); p.Timeout != 3*time.Second {
		t.Errorf("policy = %+v", p)
	}
}

// Params are as strict as the rest of the file: every problem is an
// *Error at the file's line and column.
func TestToolFactoryParamsErrors(t *testing.T) {
	for _, tc := range []struct{ name, tools, want string }{
		{"unknown key", "  - {name: s, use: search, params: {typ: news}}\n",
			`t.yaml:3:37: tools.0.params.typ: unknown field; did you mean "type"? (known in tools.0.params: api_key, headers, max, sites, timeout and type)`},
		{"wrong type", "  - name: s\n    use: search\n    params:\n      max: lots\n",
			`t.yaml:6:12: tools.0.params.max: want a non-negative integer, got "lots"`},
		{"out of range", "  - {name: s, use: search, params: {max: 300}}\n",
			`t.yaml:3:42: tools.0.params.max: 300 is out of range for this field`},
		{"unset variable", "  - {name: s, use: search, params: {api_key: \"${NOPE}\"}}\n",
			`t.yaml:3:46: tools.0.params.api_key: environment variable NOPE is not set`},
		{"variable outside credentials", "  - {name: s, use: search, params: {type: \"${SEARCH_KEY}\"}}\n",
			`t.yaml:3:43: tools.0.params.type: reads ${SEARCH_KEY}, which a config file may read only in credential fields`},
		{"params without use", "  - name: current_time\n    params: {type: news}\n",
			`t.yaml:4:5: tools.0.params: params go with use: the tool factory that takes them`},
		{"unknown factory", "  - {name: s, use: serch}\n",
			`t.yaml:3:20: tools.0.use: unknown tool factory "serch"; did you mean "search"? (registered: search)`},
		{"factory as a tool", "  - search\n",
			`t.yaml:3:5: tools.0: unknown tool "search" (available: calculator and current_time); "search" is a tool factory: write use: search, with a name for the tool`},
		{"factory refuses", "  - {name: s, use: search, params: {type: images}}\n",
			`t.yaml:3:5: tools.0: tool "s" (use: search): unknown type "images" (web or news)`},
		{"same name twice", "  - {name: s, use: search}\n  - {name: s, use: search}\n",
			`t.yaml:4:5: tools.1: tool "s" is listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := factoryLoader("SEARCH_KEY", "x").Load(writeTemp(t, "t.yaml", factoryModel+"tools:\n"+tc.tools))
			var ce *config.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// A factory must name its tool as configured, and a params type that a
// config cannot hold is an error, not a panic.
func TestToolFactoryMisbehaves(t *testing.T) {
	l := &config.Loader{Factories: map[string]config.ToolFactory{
		"misnamed": config.Factory(func(string, struct{}) (runlet.Tool, error) { return config.Calculator(), nil }),
		"nil":      config.Factory(func(string, struct{}) (runlet.Tool, error) { return nil, nil }),
		"chan":     config.Factory(func(string, struct{ C chan int }) (runlet.Tool, error) { return config.Calculator(), nil }),
	}}
	for use, want := range map[string]string{
		"misnamed": `t.yaml:3:5: tools.0: tool "x" (use: misnamed): factory "misnamed" made a tool named "calculator", not "x"`,
		"nil":      `t.yaml:3:5: tools.0: tool "x" (use: nil): factory "nil" made no tool`,
		"chan":     `t.yaml:3:38: tools.0.params.c: this program's params type has a field of type chan int`,
	} {
		yaml := factoryModel + "tools:\n  - {name: x, use: " + use + ", params: {c: 1}}\n"
		if use != "chan" {
			yaml = factoryModel + "tools:\n  - {name: x, use: " + use + "}\n"
		}
		_, err := l.Load(writeTemp(t, "t.yaml", yaml))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v\nwant %s", use, err, want)
		}
	}
}

// Printing a config masks the credential fields of tools' params.
func TestToolFactoryParamsMasked(t *testing.T) {
	yaml := factoryModel + "tools:\n  - {name: s, use: search, params: {api_key: \"${K}\", headers: {X-Key: \"${K}\"}, type: news}}\n"
	l := factoryLoader("K", "SECRET-PARAM")
	f, err := l.Decode("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	for tname, v := range map[string]any{"File": *f, "*File": f, "ToolRef": f.Tools[0], "[]ToolRef": f.Tools, "Setup": setup} {
		for pname, print := range printings {
			if out := print(v); strings.Contains(out, "SECRET") {
				t.Errorf("%s of %s shows a secret:\n%s", pname, tname, out)
			}
		}
	}
	if out := fmt.Sprintf("%+v", f.Tools[0]); !strings.Contains(out, "APIKey:[REDACTED]") || !strings.Contains(out, "Type:news") {
		t.Errorf("%%+v = %s", out)
	}
	if f.Tools[0].Params.(searchParams).APIKey != "SECRET-PARAM" {
		t.Error("the value itself must stay usable")
	}
}

// writeTemp writes data to a file named name in a new directory and
// returns its path; messages name it by that path.
func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
