package jsonscan

import (
	"encoding/json"
	"testing"
)

func TestStr(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{`"plain"`, "plain", true},
		{` "pad" `, "pad", true},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true},
		{`"\u00e9\u4E2D\u0000"`, "é中\x00", true},
		{`"\ud83d\ude00"`, "😀", true},            // surrogate pair
		{`"\uD83D\uDE00x"`, "😀x", true},          // upper-case hex
		{`"\ud83d"`, "\uFFFD", true},             // lone high surrogate
		{`"\ude00"`, "\uFFFD", true},             // lone low surrogate
		{`"\ude00\ud83d"`, "\uFFFD\uFFFD", true}, // reversed pair
		{`"\ud83d\u0041"`, "\uFFFDA", true},      // high then a non-surrogate
		{`"\ud83d\ud83d\ude00"`, "\uFFFD😀", true},
		{`"\ud83dx"`, "\uFFFDx", true},
		{"\"\xff\"", "\uFFFD", true},                     // invalid UTF-8 replaced
		{"\"a\xe6\x97\"", "a\uFFFD\uFFFD", true},         // truncated sequence
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD", true}, // UTF-8 encoded surrogate
		{"\"\xff\\n\"", "\uFFFD\n", true},
		{`"\x"`, "", false},     // unknown escape
		{`"\'"`, "", false},     // not a JSON escape
		{`"\u12"`, "", false},   // truncated \u
		{`"\u12G4"`, "", false}, // not hex
		{`"abc`, "", false},     // truncated
		{`"abc\`, "", false},
		{`"abc\"`, "", false},
		{"\"a\x01\"", "", false}, // control character
		{"\"a\t\"", "", false},
		{`null`, "", false},
		{`1`, "", false},
	}
	for _, tt := range tests {
		var s Scanner
		s.Reset([]byte(tt.in))
		got, ok := s.Str()
		ok = ok && s.End()
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("Str(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		var want string
		if err := json.Unmarshal([]byte(tt.in), &want); (err == nil) != tt.ok && tt.in != "null" || tt.ok && want != tt.want {
			t.Errorf("table disagrees with encoding/json on %q: %q, %v", tt.in, want, err)
		}
	}
}

func TestPlainString(t *testing.T) {
	for in, ok := range map[string]bool{`"a b"`: true, `"é"`: true, `"a\n"`: false, "\"\xff\"": false, `"`: false} {
		var s Scanner
		s.Reset([]byte(in))
		if _, got := s.PlainString(); got != ok {
			t.Errorf("PlainString(%q) = %v", in, got)
		}
	}
}

func TestAppendFragment(t *testing.T) {
	tests := []struct {
		body   string
		want   string
		lo, hi rune
		ok     bool
	}{
		{`abc`, "abc", 0, 0, true},
		{"a\xe6\x97", "a\xe6\x97", 0, 0, true}, // a split character is kept
		{`\ud83d`, "", 0, 0xD83D, true},        // alone: held back as hi
		{`x\ud83d`, "x", 0, 0xD83D, true},
		{`\ude00x`, "x", 0xDE00, 0, true},
		{`\ude00`, "", 0xDE00, 0, true},
		{`x\ude00`, "x\uFFFD", 0, 0, true}, // not at the start
		{`\ud83dx`, "\uFFFDx", 0, 0, true}, // not at the end
		{`\ude00\ud83d`, "", 0xDE00, 0xD83D, true},
		{`\ud83d\ude00`, "😀", 0, 0, true},
		{`\n\"`, "\n\"", 0, 0, true},
		{`\`, "", 0, 0, false},
		{`\u00`, "", 0, 0, false},
		{`\q`, "", 0, 0, false},
	}
	for _, tt := range tests {
		got, lo, hi, ok := AppendFragment(nil, []byte(tt.body))
		if ok != tt.ok || ok && (string(got) != tt.want || lo != tt.lo || hi != tt.hi) {
			t.Errorf("AppendFragment(%q) = %q %x %x %v", tt.body, got, lo, hi, ok)
		}
	}
}

func TestInt(t *testing.T) {
	for in, want := range map[string]int{`0`: 0, `-0`: 0, `42`: 42, `-7`: -7, `123456789`: 123456789} {
		if n, ok := Int([]byte(in)); !ok || n != want {
			t.Errorf("Int(%q) = %d, %v", in, n, ok)
		}
	}
	for _, in := range []string{``, `-`, `01`, `1.0`, `1e3`, `1E3`, `+1`, `1x`, `"1"`, `12345678901234567890`} {
		if n, ok := Int([]byte(in)); ok {
			t.Errorf("Int(%q) = %d, want refused", in, n)
		}
	}
}

func TestSkip(t *testing.T) {
	for in, ok := range map[string]bool{
		`{"a":[1,-2.5e+3,true,false,null,"s\u00e9",{}]}`: true,
		` [ ] `: true, `"\ud83d"`: true, "\"\xff\"": true,
		`[1,]`: false, `{"a"}`: false, `01`: false, `1.`: false, `-`: false, `[`: false, `"\x"`: false, `nul`: false,
	} {
		var s Scanner
		s.Reset([]byte(in))
		_, got := s.Skip()
		if got = got && s.End(); got != ok {
			t.Errorf("Skip(%q) = %v", in, got)
		}
	}
}

func TestFolds(t *testing.T) {
	if !Folds([]byte("TeXt"), "type", "text") || Folds([]byte("texts"), "text") || Folds([]byte("tex"), "text") {
		t.Error("Folds")
	}
}

// TestKeyRefusesWhatNeedsFolding: keys with escapes or non-ASCII bytes
// (encoding/json unescapes and Unicode-folds them) are left to it.
func TestKeyRefusesWhatNeedsFolding(t *testing.T) {
	for _, in := range []string{`"t\u0065xt":1`, "\"\u017f\":1", "\"\u212a\":1", `"a"1`} {
		var s Scanner
		s.Reset([]byte(in))
		if k, ok := s.Key(); ok {
			t.Errorf("Key(%q) = %q", in, k)
		}
	}
}

// TestAllocs pins the allocations of the hot paths: none to read keys,
// numbers, plain strings and to skip; one for a decoded string, escaped
// or not, once the scanner's scratch buffer has grown.
func TestAllocs(t *testing.T) {
	data := []byte(`{"type":"x","index":3,"on":true,"text":"hello \"world\"\n\u00e9\ud83d\ude00","skip":[1,{"a":null}],"p":"plain"}`)
	var s Scanner
	var dst []byte
	read := func() (string, bool) {
		s.Reset(data)
		var str string
		ok := s.Object(func(key []byte) bool {
			var ok bool
			switch string(key) {
			case "index":
				_, ok = s.Int()
			case "on":
				_, ok = s.Bool()
			case "text":
				str, ok = s.Str()
			case "p":
				dst, ok = s.String(dst[:0])
			case "type":
				_, ok = s.PlainString()
			default:
				_, ok = s.Skip()
			}
			return ok
		})
		return str, ok && s.End()
	}
	if str, ok := read(); !ok || str != "hello \"world\"\n\u00e9😀" {
		t.Fatalf("read: %q %v", str, ok)
	}
	if n := testing.AllocsPerRun(100, func() { read() }); n != 1 {
		t.Errorf("%v allocations, want 1", n)
	}
	body := []byte(`plain ascii \n and \u00e9`)
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf, _, _, _ = AppendFragment(buf[:0], body) }); n != 0 {
		t.Errorf("AppendFragment: %v allocations, want 0", n)
	}
}

// What Skip and PlainString return ends its capacity with the value: an
// append to one (a tool call's arguments, appended to by a hook) leaves
// the input after it, another call's arguments, as it was.
func TestSlicesEndCapacity(t *testing.T) {
	in := []byte(`[{"a":1},"plain",{"b":2}]`)
	var s Scanner
	s.Reset(in)
	var got [][]byte
	ok := s.Array(func() bool {
		if s.Peek() == '"' {
			v, ok := s.PlainString()
			got = append(got, v)
			return ok
		}
		v, ok := s.Skip()
		got = append(got, v)
		return ok
	})
	if !ok || len(got) != 3 {
		t.Fatalf("ok %v, %q", ok, got)
	}
	for _, v := range got {
		if cap(v) != len(v) {
			t.Errorf("%q: capacity %d past its length %d", v, cap(v), len(v))
		}
		_ = append(v, "XXXXXXXX"...)
	}
	if string(in) != `[{"a":1},"plain",{"b":2}]` {
		t.Errorf("input changed: %s", in)
	}
}
