package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet/config"
)

func TestConfigReplay(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	var out, errs strings.Builder
	if err := run(t.Context(), "", "agent.yaml", "", &out, &errs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "The capital of the UK is London.\n" || !strings.Contains(errs.String(), "get_capital") {
		t.Errorf("stdout %q, stderr %q", out.String(), errs.String())
	}
}

func TestConfigErrorsNameTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.yaml")
	os.WriteFile(path, []byte("model:\n  provider: openai\n  nmae: gpt-4o-mini\n"), 0o644)
	err := run(t.Context(), path, "", "hi", &strings.Builder{}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), `agent.yaml:3:3: model.nmae: unknown field; did you mean "name"?`) {
		t.Errorf("err = %v", err)
	}
}

// The seeds' config, translated to Runlet's format, loads and runs offline:
// the memory store, the message window and the factory-made tools are all
// there.
func TestSeedsReplay(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	var out, errs strings.Builder
	if err := run(t.Context(), "", "seeds.yaml", "", &out, &errs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "The capital of the UK is London.\n" || !strings.Contains(errs.String(), "get_capital") {
		t.Errorf("stdout %q, stderr %q", out.String(), errs.String())
	}

	l := &config.Loader{Factories: map[string]config.ToolFactory{"serper": serper}, AllowEnv: []string{"RUNLET_MODEL"},
		LookupEnv: func(k string) (string, bool) {
			return map[string]string{"SERPER_API_KEY": "serper-key"}[k], k == "SERPER_API_KEY"
		}}
	setup, err := l.Load("seeds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := setup.File
	if f.Store.Kind() != "memory" || f.Context.MaxMessages != 20 || f.MaxTurns != 10 {
		t.Errorf("file = %+v", f)
	}
	var names []string
	for _, tool := range setup.Agent.Tools {
		names = append(names, tool.Spec().Name)
	}
	if strings.Join(names, " ") != "search_web search_news calculator" {
		t.Errorf("tools = %v", names)
	}
	if p := f.Tools[1].Params.(SerperParams); p.APIKey != "serper-key" || p.Type != "news" {
		t.Errorf("search_news params = %+v", p)
	}
}

// A serper tool posts the query to its endpoint with its key, per type.
func TestSerperTool(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-API-KEY")+" "+string(body))
		io.WriteString(w, `{"news":[{"title":"Go 1.26"}]}`)
	}))
	defer srv.Close()
	l := &config.Loader{Factories: map[string]config.ToolFactory{"serper": serper}}
	setup, err := l.Load(writeFile(t, "model: {provider: openai, name: m, api_key: k}\ntools:\n"+
		"  - {name: news, use: serper, params: {api_key: k1, type: news, endpoint: "+srv.URL+"}}\n"+
		"  - {name: nokey, use: serper, params: {endpoint: "+srv.URL+"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := setup.Agent.Tools[0].Call(t.Context(), []byte(`{"query":"go release"}`))
	if err != nil || res != `{"news":[{"title":"Go 1.26"}]}` {
		t.Fatalf("%q, %v", res, err)
	}
	if len(got) != 1 || got[0] != `POST /news k1 {"q":"go release"}` {
		t.Errorf("requests %q", got)
	}
	if _, err := setup.Agent.Tools[1].Call(t.Context(), []byte(`{"query":"x"}`)); err == nil || !strings.Contains(err.Error(), "SERPER_API_KEY") {
		t.Errorf("without a key: %v", err)
	}
	_, err = l.Load(writeFile(t, "model: {provider: openai, name: m, api_key: k}\ntools:\n  - {name: s, use: serper, params: {type: video}}\n"))
	if err == nil || !strings.Contains(err.Error(), `agent.yaml:3:5: tools.0: tool "s" (use: serper): type "video": want search, news or images`) {
		t.Errorf("err = %v", err)
	}
}

func writeFile(t *testing.T, data string) string {
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
