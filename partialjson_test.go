package runlet

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestPartialJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, ``},
		{`  `, ``},
		{`{`, `{}`},
		{`{"na`, `{}`},
		{`{"name"`, `{}`},
		{`{"name":`, `{}`},
		{`{"name": "Ad`, `{"name":"Ad"}`},
		{`{"name": "Ada", "age": 3`, `{"name":"Ada"}`},
		{`{"name": "Ada", "age": 36,`, `{"age":36,"name":"Ada"}`},
		{`{"tags": ["a", "b`, `{"tags":["a","b"]}`},
		{`{"tags": ["a", tr`, `{"tags":["a"]}`},
		{`{"ok": true, "n": null}`, `{"n":null,"ok":true}`},
		{`[1, 2, [3, {"x": "y\`, `[1,2,[3,{"x":"y"}]]`},
		{`"a\u00e9\u00`, `"aé"`},
		{`"\ud83d`, `""`},
		{`"\ud83d\ude0`, `""`},
		{`"\ud83d\ude00`, `"😀"`},
		{"\"caf\xc3", `"caf"`},
		{`{"a": 1} trailing`, `{"a":1}`},
		{`-`, ``},
		{`{"a": tx`, `x`},
		{`{"a" 1`, `x`},
		{`[1 2]`, `x`},
		{`{,}`, `x`},
		{`{"a": 01}`, `x`},
	} {
		got, ok := partialJSON([]byte(c.in))
		switch {
		case c.want == "" && ok:
			t.Errorf("%q: got %s, want nothing", c.in, got)
		case c.want == "x" && ok:
			t.Errorf("%q: got %s, want broken", c.in, got)
		case c.want != "" && c.want != "x" && string(got) != c.want:
			t.Errorf("%q: got %s (ok %v), want %s", c.in, got, ok, c.want)
		}
	}
}

// consistent reports whether partial p says nothing the complete value f
// contradicts: objects may lack members, arrays trailing elements, strings
// their end.
func consistent(p, f any) bool {
	switch p := p.(type) {
	case map[string]any:
		fm, ok := f.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range p {
			fv, has := fm[k]
			if !has || !consistent(v, fv) {
				return false
			}
		}
		return true
	case []any:
		fa, ok := f.([]any)
		if !ok || len(p) > len(fa) {
			return false
		}
		for i := range p {
			if !consistent(p[i], fa[i]) {
				return false
			}
		}
		return true
	case string:
		fs, ok := f.(string)
		return ok && strings.HasPrefix(fs, p)
	case json.Number:
		fn, ok := f.(json.Number)
		return ok && p == fn
	default:
		return reflect.DeepEqual(p, f)
	}
}

// hasDuplicateKeys reports whether a JSON document repeats a key in an
// object (its prefixes may then legitimately disagree with it).
func hasDuplicateKeys(doc []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	type frame struct {
		obj    bool
		keys   map[string]bool
		expKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expKey {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.expKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.obj {
				top.expKey = true
			}
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, expKey: true})
		case json.Delim('['):
			if top != nil && top.obj {
				top.expKey = true
			}
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return false
			}
		default:
			if top != nil && top.obj {
				top.expKey = true
			}
		}
	}
}

func FuzzPartialJSON(f *testing.F) {
	for _, s := range []string{
		`{"number":"A-17","total":12.5,"lines":["tea","cake"],"paid":false,"note":null}`,
		`[1,[2,[3]],{"a":{"b":"c\"d\\e\u00e9\ud83d\ude00"}}]`,
		`{"a":-1.5e+3,"b":"\n\t","c":[]}`,
		`"just a string"`,
		`{"k":"ünïcödé 😀"}`,
		"{\"broken\": tru",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		// Never panics, on anything.
		_, _ = parsePartialJSON(doc)
		if len(doc) > 2048 { // every prefix is parsed below: keep it quadratic in little
			return
		}
		var full any
		dec := json.NewDecoder(strings.NewReader(string(doc)))
		dec.UseNumber()
		if dec.Decode(&full) != nil || dec.More() || !json.Valid(doc) || hasDuplicateKeys(doc) {
			return
		}
		for i := 0; i <= len(doc); i++ {
			p, ok := parsePartialJSON(doc[:i])
			if ok && !consistent(p, full) {
				t.Fatalf("prefix %q gives %#v, which contradicts %#v", doc[:i], p, full)
			}
		}
		if p, ok := parsePartialJSON(doc); ok && !reflect.DeepEqual(p, full) {
			t.Fatalf("complete document gives %#v, want %#v", p, full)
		}
	})
}
