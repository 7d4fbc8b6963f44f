package wirejson

import (
	"encoding/json"
	"math"
	"testing"
)

var appendStrings = []string{
	"", "plain", `quote " and \ backslash`, "line\nbreak\ttab\r\b\f\x00\x1f\x7f",
	"<html> & 'amp'", "caf\u00e9 \u65e5\u672c", "sep\u2028\u2029", "bad \xff\xfe utf8 \xe2\x82", "emoji \U0001F600",
}

func TestAppendString(t *testing.T) {
	for _, s := range appendStrings {
		want, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendString(%q) = %s, want x%s", s, got, want)
		}
		checkAppendStringBytes(t, s, want)
	}
}

// checkAppendStringBytes checks the []byte forms against Marshal's want.
func checkAppendStringBytes(t *testing.T, s string, want []byte) {
	t.Helper()
	if got := AppendString([]byte("x"), json.RawMessage(s)); string(got) != "x"+string(want) {
		t.Errorf("AppendString(bytes %q) = %s, want x%s", s, got, want)
	}
	if got := AppendEscaped([]byte("x"), []byte(s)); `x"`+string(got[1:])+`"` != "x"+string(want) {
		t.Errorf("AppendEscaped(%q) = %s, want %s unquoted", s, got, want)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		checkAppendStringBytes(t, s, want)
	})
}

var appendRaws = []string{
	``, `{}`, `{"a":1}`, ` { "a" : [ 1 , 2 ] } `, `"str ing"`, `{"s":"a \" b"}`, `{"s":"<&>\u2028"}`, "{\"s\":\"\u2028\"}",
	`{`, `{"a":}`, `nul`, `1 2`, "\"\xff\"", `[1,2,3]`, `{"a":"\\"}`, `{"a":"\\" , "b":2}`,
}

func TestAppendRaw(t *testing.T) { checkAppendRaws(t, appendRaws) }

func checkAppendRaws(t *testing.T, raws []string) {
	t.Helper()
	for _, r := range raws {
		checkAppendRaw(t, r)
	}
}

func TestAppendRawNil(t *testing.T) {
	if got, err := AppendRaw(nil, nil); err != nil || string(got) != "null" {
		t.Errorf("AppendRaw(nil) = %s, %v", got, err)
	}
}

func checkAppendRaw(t *testing.T, r string) {
	t.Helper()
	raw := json.RawMessage(r)
	if raw == nil {
		raw = json.RawMessage{}
	}
	want, werr := Marshal(raw)
	got, gerr := AppendRaw([]byte("x"), raw)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("AppendRaw(%q): error %v, Marshal's %v", r, gerr, werr)
	}
	if werr != nil {
		if gerr.Error() != werr.Error() {
			t.Errorf("AppendRaw(%q): error %v, Marshal's %v", r, gerr, werr)
		}
		if string(got) != "x" {
			t.Errorf("AppendRaw(%q) failed but appended: %q", r, got)
		}
		return
	}
	if string(got) != "x"+string(want) {
		t.Errorf("AppendRaw(%q) = %s, want x%s", r, got, want)
	}
}

func FuzzAppendRaw(f *testing.F) {
	for _, r := range appendRaws {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, r string) { checkAppendRaw(t, r) })
}

var appendFloats = []float64{0, 1, -1, 0.5, 0.1, 1e-6, 1e-7, 9.99e-7, 1e20, 1e21, 1.5e300, -2.5e-10, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1)}

func TestAppendFloat(t *testing.T) {
	for _, f := range appendFloats {
		checkAppendFloat(t, f)
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		checkAppendFloat(t, f)
	}
}

func checkAppendFloat(t *testing.T, f float64) {
	t.Helper()
	want, werr := Marshal(f)
	got, gerr := AppendFloat([]byte("x"), f)
	if (werr != nil) != (gerr != nil) || werr != nil && (werr.Error() != gerr.Error() || string(got) != "x") {
		t.Fatalf("AppendFloat(%v) = %q, %v; Marshal's error %v", f, got, gerr, werr)
	}
	if werr == nil && string(got) != "x"+string(want) {
		t.Errorf("AppendFloat(%v) = %s, want x%s", f, got, want)
	}
}

func FuzzAppendFloat(f *testing.F) {
	for _, v := range appendFloats {
		f.Add(v)
	}
	f.Fuzz(checkAppendFloat)
}

func TestCompactOwned(t *testing.T) {
	for _, r := range append(appendRaws, "null", " null ", `{"a": 1}`) {
		in := json.RawMessage(r)
		got, want := CompactOwned(in), Compact(in)
		if string(got) != string(want) {
			t.Errorf("CompactOwned(%q) = %q, Compact gives %q", r, got, want)
		}
		if len(in) > 0 && len(got) > 0 && &got[0] == &in[0] && !json.Valid(in) {
			t.Errorf("CompactOwned(%q) returned invalid input as it is", r)
		}
	}
	in := json.RawMessage(`{"a":[1,"b c"]}`)
	if got := CompactOwned(in); &got[0] != &in[0] {
		t.Error("compact input copied")
	}
}
