package trusttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/safehttp"
)

const (
	urlPassword = "url-PASSWORD-31337"
	urlKey      = "url-QUERYKEY-4242"
)

// printers are every way a program prints a value.
var printers = map[string]func(v any) string{
	"%v":         func(v any) string { return fmt.Sprintf("%v", v) },
	"%+v":        func(v any) string { return fmt.Sprintf("%+v", v) },
	"%#v":        func(v any) string { return fmt.Sprintf("%#v", v) },
	"%s":         func(v any) string { return fmt.Sprintf("%s", v) },
	"%q":         func(v any) string { return fmt.Sprintf("%q", v) },
	"%x":         func(v any) string { return fmt.Sprintf("%x", v) },
	"%d":         func(v any) string { return fmt.Sprintf("%d", v) },
	"Sprint":     func(v any) string { return fmt.Sprint(v) },
	"Sprintln":   func(v any) string { return fmt.Sprintln(v) },
	"nested %+v": func(v any) string { return fmt.Sprintf("%+v", struct{ Inner any }{v}) },
	"nested %#v": func(v any) string { return fmt.Sprintf("%#v", struct{ Inner any }{v}) },
	"slog text":  func(v any) string { return logged(v, false) },
	"slog json":  func(v any) string { return logged(v, true) },
	"json":       func(v any) string { b, err := json.Marshal(v); return string(b) + fmt.Sprint(err) },
	"json nested": func(v any) string {
		b, err := json.Marshal(map[string]any{"cfg": v})
		return string(b) + fmt.Sprint(err)
	},
}

func logged(v any, asJSON bool) string {
	var b bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&b, nil)
	if asJSON {
		h = slog.NewJSONHandler(&b, nil)
	}
	slog.New(h).Info("config", "cfg", v)
	return b.String()
}

// TestPrintingMasksCredentials: printing any type holding a key, by any
// path (fmt verbs, Sprint, nested in a struct, slog's text and JSON
// handlers, encoding/json), shows neither the key, the user's secret
// headers, nor a password or key in the base URL; the rest stays readable.
func TestPrintingMasksCredentials(t *testing.T) {
	c := conf{BaseURL: "https://user:" + urlPassword + "@api.example.com/v1?key=" + urlKey, APIKey: key,
		Headers: http.Header{"X-Custom-Auth": {secret}}, HTTPClient: &http.Client{}}
	values := map[string]any{}
	for _, a := range adapters {
		values[a.name+" Config"] = a.config(c)
		values[a.name+" *Config"] = ptr(a.config(c))
		values[a.name+" model"] = a.new(c)
	}
	client := httpc.NewClient("p", nil, 0, http.Header{"Authorization": {"Bearer " + key}, "X-Custom-Auth": {secret}}, http.Header{"X-Custom-Auth": nil}, false)
	client.Secrets = []string{key}
	values["httpc.Client"] = client
	origin, _ := url.Parse("https://u:" + urlPassword + "@mcp.example.com/mcp?token=" + urlKey)
	values["safehttp.Policy"] = safehttp.Policy{Origin: origin, Header: http.Header{"Authorization": {"Bearer " + key}}}
	for name, v := range values {
		for how, print := range printers {
			out := print(v)
			if strings.HasPrefix(how, "json") && !strings.HasSuffix(out, "<nil>") {
				t.Errorf("%s does not marshal: %s", name, out)
			}
			for _, s := range []string{key, secret, urlPassword, urlKey} {
				if strings.Contains(out, s) {
					t.Errorf("%s printed with %s shows a credential: %s", name, how, out)
					break
				}
			}
		}
	}
	// Still useful: the model and base URL's host show.
	if out := fmt.Sprintf("%+v", adapters[0].config(c)); !strings.Contains(out, "api.example.com") || !strings.Contains(out, "Model:m") {
		t.Errorf("%%+v hides too much: %s", out)
	}
}

// ptr returns a pointer to a copy of v, of v's own type.
func ptr(v any) any {
	p := reflect.New(reflect.TypeOf(v))
	p.Elem().Set(reflect.ValueOf(v))
	return p.Interface()
}
