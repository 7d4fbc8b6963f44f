package config_test

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/runlet/runlet/config"
)

// credentialFields may read any variable: their values go to the provider
// or the MCP server as credentials, or to a server process's environment.
var credentialFields = []string{
	"model.api_key", "model.base_url", "model.headers.k",
	"mcp_servers.0.url", "mcp_servers.0.headers.k", "mcp_servers.0.env.k",
	"store.postgres.dsn", "store.redis.url",
}

// leaves lists the YAML path of every scalar field of t, reached through
// structs, pointers, lists (index 0) and maps (key k): every field a config
// file can set.
func leaves(t reflect.Type, prefix string, seen map[reflect.Type]bool) []string {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return []string{prefix}
	case t.Kind() == reflect.Pointer:
		return leaves(t.Elem(), prefix, seen)
	case t.Kind() == reflect.Slice:
		return leaves(t.Elem(), join("0"), seen)
	case t.Kind() == reflect.Map:
		return leaves(t.Elem(), join("k"), seen)
	case t.Kind() == reflect.Interface:
		return []string{join("k"), join("k.0"), join("k.k")}
	case t.Kind() != reflect.Struct:
		return []string{prefix}
	}
	if seen[t] {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	var out []string
	for f := range t.Fields() {
		tag := f.Tag.Get("yaml")
		if tag == "" {
			tag = f.Tag.Get("json")
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, leaves(f.Type, join(name), seen)...)
	}
	return out
}

// withValue is a config with value at the dotted path p, plus what the
// model section and an MCP server entry need.
func withValue(t *testing.T, p, value string) []byte {
	t.Helper()
	doc := map[string]any{"model": map[string]any{"provider": "openai", "name": "m"}}
	var set func(node any, parts []string) any
	set = func(node any, parts []string) any {
		if len(parts) == 0 {
			return value
		}
		if i, err := strconv.Atoi(parts[0]); err == nil {
			list, _ := node.([]any)
			for len(list) <= i {
				list = append(list, map[string]any{})
			}
			list[i] = set(list[i], parts[1:])
			return list
		}
		m, ok := node.(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		m[parts[0]] = set(m[parts[0]], parts[1:])
		return m
	}
	if strings.HasPrefix(p, "mcp_servers.") {
		doc["mcp_servers"] = []any{map[string]any{"name": "s", "command": "x"}}
	}
	doc = set(doc, strings.Split(p, ".")).(map[string]any)
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A config file someone else wrote cannot send a secret to the model:
// outside its credential fields it reads only the variables the program or
// the CLI user allowed. Every field a file can set is checked, found by
// reflection, so a new field needs a decision here.
func TestEnvOnlyAllowedOutsideCredentials(t *testing.T) {
	const secret = "AKIA-very-secret-7f3"
	fields := leaves(reflect.TypeFor[config.File](), "", map[reflect.Type]bool{})
	fields = append(fields, "tools.0", "output_schema.properties.a.description")
	for _, c := range credentialFields {
		if !slices.Contains(fields, c) {
			t.Fatalf("credential field %s is not a field", c)
		}
	}
	lookup := env("AWS_SECRET_ACCESS_KEY", secret)
	for _, field := range fields {
		t.Run(field, func(t *testing.T) {
			data := withValue(t, field, "${AWS_SECRET_ACCESS_KEY}")
			f, err := (&config.Loader{LookupEnv: lookup}).Decode("other.yaml", data)
			if slices.Contains(credentialFields, field) {
				if err != nil && strings.Contains(err.Error(), "reads ${") {
					t.Errorf("a credential field may read any variable: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s read ${AWS_SECRET_ACCESS_KEY} unasked:\n%s\nfile: %+v", field, data, f)
			}
			msg := err.Error()
			for _, want := range []string{"other.yaml:", "reads ${AWS_SECRET_ACCESS_KEY}", "--allow-env AWS_SECRET_ACCESS_KEY", "Loader.AllowEnv"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, secret) {
				t.Errorf("the value leaked into the error: %s", msg)
			}

			// Allowed, by name or by prefix, the variable is read.
			for _, allow := range [][]string{{"AWS_SECRET_ACCESS_KEY"}, {"AWS_*"}, {"*"}} {
				_, err := (&config.Loader{LookupEnv: env("AWS_SECRET_ACCESS_KEY", "7"), AllowEnv: allow}).Decode("other.yaml", data)
				if err != nil && strings.Contains(err.Error(), "reads ${") {
					t.Errorf("AllowEnv %v: %v", allow, err)
				}
			}
		})
	}
}

// The rule holds through aliases and defaults, allows only what it names,
// and every such problem is reported at once, each at its line.
func TestEnvRuleCases(t *testing.T) {
	lookup := env("SECRET", "s3cr3t-value", "APP_TONE", "terse", "APPLE", "x")
	yamlText := `model:
  provider: openai
  name: m
  headers: {X-Key: &k "${SECRET}"}
  options:
    tone: ${APP_TONE}
    leak: *k
    unset: ${NOT_SET:-fallback}
instructions: "Be ${APP_TONE}. Key: ${SECRET} ${APPLE}"
output_schema: {type: object, description: "$${SECRET} is literal"}
`
	_, err := (&config.Loader{LookupEnv: lookup, AllowEnv: []string{"APP_*"}}).Decode("a.yaml", []byte(yamlText))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		"a.yaml:7:11: model.options.leak: reads ${SECRET}", // an alias of a credential, read here
		"a.yaml:8:12: model.options.unset: reads ${NOT_SET}",
		"a.yaml:9:15: instructions: reads ${APPLE} and ${SECRET}",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d errors, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d:\n%s\nwant prefix:\n%s", i, lines[i], w)
		}
	}
	if strings.Contains(err.Error(), "s3cr3t-value") {
		t.Error("a value leaked into the error")
	}

	f, err := (&config.Loader{LookupEnv: lookup, AllowEnv: []string{"APP_*", "SECRET", "NOT_SET", "APPLE"}}).Decode("a.yaml", []byte(yamlText))
	if err != nil {
		t.Fatal(err)
	}
	if f.Instructions != "Be terse. Key: s3cr3t-value x" || f.Model.Options["unset"] != "fallback" || f.OutputSchema["description"] != "${SECRET} is literal" {
		t.Errorf("file = %+v", f)
	}
}
