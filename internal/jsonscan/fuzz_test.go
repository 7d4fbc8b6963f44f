package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz tests hold the scanner to encoding/json: whatever it accepts,
// encoding/json decodes without error to the same value; strings, which
// the scanner decodes in full, it accepts exactly when encoding/json does.

var stringSeeds = []string{
	`""`, `"hello"`, `"Héllo 😀 東京"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4E2D"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"x\ud83dy"`, `"\ud83d\u0041"`, `"\ude00\ud83d"`,
	`"\ud83d\ud83d\ude00"`, "\"\xff\xfe\"", "\"a\xe6\x97\"", "\"\xed\xa0\x80\"", `"\x"`, `"\u12"`,
	`"\u12G4"`, `"abc`, `"abc\`, "\"a\x01\"", `"a"b"`, ` "pad" `, `"\'"`, `"\u0000"`, "\"\u2028\"",
}

func FuzzString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want string
		wantErr := json.Unmarshal(data, &want)
		isString := bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte(`"`)) // not null
		var s Scanner
		s.Reset(data)
		got, ok := s.Str()
		ok = ok && s.End()
		if wantErr == nil && !ok && isString {
			// Every string encoding/json decodes, the scanner decodes too.
			t.Fatalf("scanner refused %q, encoding/json gives %q", data, want)
		}
		if !ok {
			return
		}
		if wantErr != nil {
			t.Fatalf("scanner accepted %q (%q), encoding/json: %v", data, got, wantErr)
		}
		if got != want {
			t.Fatalf("%q: scanner %q, encoding/json %q", data, got, want)
		}
		s.Reset(data)
		if b, ok := s.String([]byte("x")); !ok || string(b) != "x"+want {
			t.Fatalf("String(%q) = %q, %v", data, b, ok)
		}
		s.Reset(data)
		if b, ok := s.PlainString(); ok && string(b) != want {
			t.Fatalf("PlainString(%q) = %q", data, b)
		}
		// A fragment decodes the same once its edge surrogates are
		// replaced, when the bytes are valid UTF-8 (else it keeps them).
		body := bytes.TrimSpace(data)
		body = body[1 : len(body)-1]
		frag, lo, hi, ok := AppendFragment(nil, body)
		if !ok {
			t.Fatalf("AppendFragment(%q) refused", body)
		}
		if utf8.Valid(body) {
			if lo != 0 {
				frag = append([]byte(string(utf8.RuneError)), frag...)
			}
			if hi != 0 {
				frag = utf8.AppendRune(frag, utf8.RuneError)
			}
			if string(frag) != want {
				t.Fatalf("AppendFragment(%q) = %q (lo %x, hi %x), want %q", body, frag, lo, hi, want)
			}
		}
	})
}

// FuzzSkip checks that Skip accepts a value exactly when encoding/json
// finds it valid (values nested deeper than maxDepth are declined).
func FuzzSkip(f *testing.F) {
	for _, s := range append(stringSeeds,
		`{}`, `[]`, `{"a":[1,-2.5e+3,0.1E-2,true,false,null,"s",{"b":{}}]}`, ` [ 1 , 2 ] `,
		`01`, `-`, `1.`, `1e`, `.5`, `+1`, `-0`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `tru`, `nul`,
		`[`, `{"a":1`, `1 2`, `{"a":"\ud83d"}`, strings.Repeat("[", 70)+strings.Repeat("]", 70)) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Scanner
		s.Reset(data)
		raw, ok := s.Skip()
		ok = ok && s.End()
		valid := json.Valid(data)
		if ok && !valid {
			t.Fatalf("Skip accepted invalid %q", data)
		}
		if valid && !ok && depth(data) <= maxDepth {
			t.Fatalf("Skip refused valid %q", data)
		}
		if ok && !bytes.Equal(raw, bytes.TrimSpace(data)) {
			t.Fatalf("Skip(%q) returned %q", data, raw)
		}
	})
}

// depth returns the deepest nesting of brackets in data (strings not
// excluded: an overestimate is fine for the test).
func depth(data []byte) int {
	d, most := 0, 0
	for _, c := range data {
		switch c {
		case '[', '{':
			d++
			most = max(most, d)
		case ']', '}':
			d--
		}
	}
	return most
}

func FuzzInt(f *testing.F) {
	for _, s := range []string{`0`, `-0`, `12`, `-12`, `01`, `1.0`, `1e2`, `-`, ` 7 `, `123456789`, `1234567890123456789`, `99999999999999999999`, `"1"`, `1x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Scanner
		s.Reset(data)
		n, ok := s.Int()
		if !ok || !s.End() {
			return
		}
		var want int
		if err := json.Unmarshal(data, &want); err != nil || n != want {
			t.Fatalf("Int(%q) = %d, encoding/json %d, %v", data, n, want, err)
		}
		if m, ok := Int(bytes.TrimSpace(data)); !ok || m != n {
			t.Fatalf("Int(%q) = %d, %v", data, m, ok)
		}
	})
}

// record is a struct decoded both ways in FuzzObject.
type record struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	On    bool   `json:"on"`
	Tags  []byte `json:"-"`
}

// scanRecord is a fast path in the style of the adapters': known keys
// read, others skipped unless they fold to a field.
func scanRecord(data []byte, r *record) bool {
	var s Scanner
	s.Reset(data)
	ok := s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "name":
			r.Name, ok = s.Str()
		case "count":
			r.Count, ok = s.Int()
		case "on":
			r.On, ok = s.Bool()
		default:
			if Folds(key, "name", "count", "on") {
				return false
			}
			_, ok = s.Skip()
		}
		return ok
	})
	return ok && s.End()
}

func FuzzObject(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","count":3,"on":true}`, `{"NAME":"a"}`, `{"name":"a","name":"b"}`, `{"x":[1,{"y":null}],"on":false}`,
		`{"name":null}`, `{"count":1.5}`, `{"n\u0061me":"a"}`, `{"ſ":1}`, `{}`, `{"name":"a"} x`, `[]`, `{"on":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast record
		if !scanRecord(data, &fast) {
			return
		}
		var slow record
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", data, err)
		}
		if fast.Name != slow.Name || fast.Count != slow.Count || fast.On != slow.On {
			t.Fatalf("%q: fast %+v, encoding/json %+v", data, fast, slow)
		}
	})
}
