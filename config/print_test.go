package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/config"
)

// printings are the ways a program prints a value: every fmt verb that
// prints a struct's strings, slog's handlers, JSON, an error.
var printings = map[string]func(v any) string{
	"%v":       func(v any) string { return fmt.Sprintf("%v", v) },
	"%+v":      func(v any) string { return fmt.Sprintf("%+v", v) },
	"%#v":      func(v any) string { return fmt.Sprintf("%#v", v) },
	"%s":       func(v any) string { return fmt.Sprintf("%s", v) },
	"%q":       func(v any) string { return fmt.Sprintf("%q", v) },
	"%x":       func(v any) string { return fmt.Sprintf("%x", v) },
	"%d":       func(v any) string { return fmt.Sprintf("%d", v) },
	"%10.3v":   func(v any) string { return fmt.Sprintf("%10.3v", v) },
	"Sprint":   func(v any) string { return fmt.Sprint(v) },
	"Sprintln": func(v any) string { return fmt.Sprintln("x", v) },
	"error":    func(v any) string { return fmt.Errorf("loading %v", v).Error() },
	"slog text": func(v any) string {
		var b bytes.Buffer
		slog.New(slog.NewTextHandler(&b, nil)).Info("config", "value", v)
		return b.String()
	},
	"slog json": func(v any) string {
		var b bytes.Buffer
		slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "value", v)
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

const secretYAML = `model:
  provider: openai
  name: gpt-test
  api_key: ${KEY}
  base_url: https://user:${PW}@api.example.com/v1?token=${TOKEN}&region=eu
  headers: {X-Api-Token: "${HDR}"}
mcp_servers:
  - name: gh
    url: https://api.example.com/mcp?access_token=${TOKEN}
    headers: {Authorization: "Bearer ${HDR}"}
  - name: files
    command: server
    env: {GITHUB_TOKEN: "${ENVV}"}
`

// Printing a config never prints a credential, whatever the type (File,
// Model, MCPServer, Setup, values and pointers, in slices and maps) and
// whatever the way: fmt's verbs, slog's handlers, JSON, errors.
func TestPrintingMasksCredentials(t *testing.T) {
	l := &config.Loader{LookupEnv: env("KEY", "sk-SECRET1", "PW", "SECRET2", "TOKEN", "SECRET3", "HDR", "SECRET4", "ENVV", "SECRET5")}
	f, err := l.Decode("agent.yaml", []byte(secretYAML))
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.APIKey != "sk-SECRET1" || f.MCPServers[1].Env["GITHUB_TOKEN"] != "SECRET5" {
		t.Fatalf("decoded %+v", f.Model) // masked, but the values must be there
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{
		"File": *f, "*File": f, "Model": f.Model, "*Model": &f.Model,
		"MCPServer": f.MCPServers[0], "*MCPServer": &f.MCPServers[1], "[]MCPServer": f.MCPServers,
		"map of Model": map[string]config.Model{"m": f.Model}, "Setup": *setup, "*Setup": setup,
	}
	for tname, v := range values {
		for pname, print := range printings {
			t.Run(tname+" "+pname, func(t *testing.T) {
				out := print(v)
				if strings.Contains(out, "SECRET") {
					t.Errorf("%s of %s shows a secret:\n%s", pname, tname, out)
				}
			})
		}
	}

	// What is not a secret still shows.
	out := fmt.Sprintf("%+v", f.Model)
	for _, want := range []string{"Name:gpt-test", "APIKey:[REDACTED]", "https://[REDACTED]@api.example.com/v1?token=[REDACTED]&region=[REDACTED]", "X-Api-Token:[REDACTED]"} {
		if !strings.Contains(out, want) {
			t.Errorf("%%+v lacks %q:\n%s", want, out)
		}
	}
	if out := fmt.Sprintf("%#v", f.MCPServers[1]); !strings.HasPrefix(out, `config.MCPServer{Name:"files", Command:"server"`) {
		t.Errorf("%%#v = %s", out)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(printings["json"](f.Model)), &back); err != nil || back["Name"] != "gpt-test" || back["APIKey"] != "[REDACTED]" {
		t.Errorf("json = %v, %v", back, err)
	}
	var empty config.Model
	if out := fmt.Sprintf("%+v", empty); !strings.Contains(out, "APIKey: ") {
		t.Errorf("an unset key should print empty: %s", out)
	}
}

// Every credential field (tagged config:"credential") is masked: a field
// added later is covered without changing this test.
func TestEveryCredentialFieldMasked(t *testing.T) {
	for _, v := range []any{&config.File{}, &config.Model{}, &config.MCPServer{}} {
		rv := reflect.ValueOf(v).Elem()
		n := fillCredentials(t, rv)
		if _, ok := v.(*config.File); !ok && n == 0 {
			t.Fatalf("%T has no credential field", v)
		}
		for pname, print := range printings {
			if out := print(rv.Interface()); strings.Contains(out, "SECRET") {
				t.Errorf("%s of %T shows a secret:\n%s", pname, v, out)
			}
		}
	}
}

// fillCredentials sets every credential field in v, and those of the
// structs in it, to hold "SECRET"; it returns how many it set.
func fillCredentials(t *testing.T, v reflect.Value) int {
	n := 0
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Tag.Get("config") == "credential" {
			switch fv.Kind() {
			case reflect.String:
				fv.SetString("https://u:SECRET@h/p?q=SECRET#SECRET")
			case reflect.Map:
				fv.Set(reflect.ValueOf(map[string]string{"K": "SECRET"}))
			default:
				t.Fatalf("credential field %s of kind %s", f.Name, fv.Kind())
			}
			n++
			continue
		}
		switch fv.Kind() {
		case reflect.Struct:
			n += fillCredentials(t, fv)
		case reflect.Slice:
			if fv.Type().Elem().Kind() == reflect.Struct {
				s := reflect.MakeSlice(fv.Type(), 1, 1)
				n += fillCredentials(t, s.Index(0))
				fv.Set(s)
			}
		}
	}
	return n
}
