package jsonscan

import "testing"

func TestOnce(t *testing.T) {
	var seen uint8
	if !Once(&seen, 1) || !Once(&seen, 2) || Once(&seen, 1) || Once(&seen, 2) {
		t.Errorf("Once: a bit is accepted only the first time (seen %b)", seen)
	}
}

func TestSkipUnless(t *testing.T) {
	fields := []string{"name", "args"}
	for _, tc := range []struct {
		in, key string
		ok      bool
	}{
		{`{"x":1} `, "other", true},
		{`[1,{"a":2}]`, "other", true},
		{`1`, "name", false},
		{`1`, "NAME", false},
		{`1`, "Args", false},
		{`{`, "other", false},
	} {
		var s Scanner
		s.Reset([]byte(tc.in))
		if got := s.SkipUnless([]byte(tc.key), fields); got != tc.ok {
			t.Errorf("SkipUnless(%q) on %s = %v, want %v", tc.key, tc.in, got, tc.ok)
		}
	}
}

func TestIntStrField(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{{`12`, 12, true}, {`null`, 7, true}, {`"1"`, 7, false}, {`1.5`, 7, false}} {
		var s Scanner
		s.Reset([]byte(tc.in))
		n := 7
		if ok := s.IntField(&n); ok != tc.ok || (ok && n != tc.want) {
			t.Errorf("IntField(%s) = %d, %v; want %d, %v", tc.in, n, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{{`"a\nb"`, "a\nb", true}, {`null`, "keep", true}, {`1`, "keep", false}} {
		var s Scanner
		s.Reset([]byte(tc.in))
		v := "keep"
		if ok := s.StrField(&v); ok != tc.ok || (ok && v != tc.want) {
			t.Errorf("StrField(%s) = %q, %v; want %q, %v", tc.in, v, ok, tc.want, tc.ok)
		}
	}
}
