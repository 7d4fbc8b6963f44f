package dataurl

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, mt, data string
		ok           bool
	}{
		{"data:image/png;base64,aGk=", "image/png", "hi", true},
		{"data:image/png;base64,aGk", "image/png", "hi", true}, // unpadded
		{"data:text/plain;charset=utf-8,a%20b", "text/plain;charset=utf-8", "a b", true},
		{"data:,x", "", "x", true},
		{"data:image/png;base64,!!", "", "", false},
		{"data:image/png;base64", "", "", false}, // no comma
		{"https://example.com/a.png", "", "", false},
		{"data:text/plain,%zz", "", "", false},
	} {
		mt, d, ok := Parse(tc.in)
		if ok != tc.ok || mt != tc.mt || string(d) != tc.data {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", tc.in, mt, d, ok, tc.mt, tc.data, tc.ok)
		}
	}
}
