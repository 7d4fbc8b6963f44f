package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// Printing a ServerConfig, or a Toolset holding one, never prints a
// credential (Env and Headers values, a URL's user info, query and
// fragment), whatever the way: fmt's verbs, slog's handlers, JSON, errors.
func TestPrintingMasksCredentials(t *testing.T) {
	cfg := ServerConfig{
		Name: "gh", Command: "server", Args: []string{"--stdio"}, Env: map[string]string{"GITHUB_TOKEN": "ghp_SECRET1"},
		URL:     "https://user:SECRET2@api.example.com/mcp?access_token=SECRET3#SECRET4",
		Headers: map[string]string{"Authorization": "Bearer SECRET5"}, Stderr: os.Stderr,
	}
	values := map[string]any{
		"ServerConfig": cfg, "*ServerConfig": &cfg, "[]ServerConfig": []ServerConfig{cfg},
		"*Toolset": &Toolset{cfg: cfg, name: "gh"}, "struct holding one": struct{ C ServerConfig }{cfg},
	}
	printings := map[string]func(any) string{
		"%v": func(v any) string { return fmt.Sprintf("%v", v) }, "%+v": func(v any) string { return fmt.Sprintf("%+v", v) },
		"%#v": func(v any) string { return fmt.Sprintf("%#v", v) }, "%s": func(v any) string { return fmt.Sprintf("%s", v) },
		"%q": func(v any) string { return fmt.Sprintf("%q", v) }, "%x": func(v any) string { return fmt.Sprintf("%x", v) },
		"%d": func(v any) string { return fmt.Sprintf("%d", v) }, "Sprint": func(v any) string { return fmt.Sprint(v) },
		"error": func(v any) string { return fmt.Errorf("connecting %v", v).Error() },
		"slog text": func(v any) string {
			var b bytes.Buffer
			slog.New(slog.NewTextHandler(&b, nil)).Info("mcp", "server", v)
			return b.String()
		},
		"slog json": func(v any) string {
			var b bytes.Buffer
			slog.New(slog.NewJSONHandler(&b, nil)).Info("mcp", "server", v)
			return b.String()
		},
		"json": func(v any) string {
			b, err := json.Marshal(v)
			if err != nil {
				return "json error: " + err.Error()
			}
			return string(b)
		},
	}
	for vname, v := range values {
		for pname, print := range printings {
			if out := print(v); strings.Contains(out, "SECRET") {
				t.Errorf("%s of %s shows a secret:\n%s", pname, vname, out)
			}
		}
	}
	out := fmt.Sprintf("%+v", cfg)
	for _, want := range []string{"Name:gh", "Args:[--stdio]", "GITHUB_TOKEN:[REDACTED]", "URL:https://[REDACTED]@api.example.com/mcp?access_token=[REDACTED]#[REDACTED]", "Authorization:[REDACTED]"} {
		if !strings.Contains(out, want) {
			t.Errorf("%%+v lacks %q:\n%s", want, out)
		}
	}
	if out := fmt.Sprintf("%#v", cfg); !strings.HasPrefix(out, `mcp.ServerConfig{Name:"gh"`) {
		t.Errorf("%%#v = %s", out)
	}
	if out := printings["json"](cfg); !strings.HasPrefix(out, `{"Name":"gh","Command":"server"`) {
		t.Errorf("json = %s", out)
	}
}
