package dataurl

import (
	"bytes"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n rest")
	u := Encode("", png)
	if u[:len("data:image/png;base64,")] != "data:image/png;base64," {
		t.Fatalf("%q", u)
	}
	mt, d, ok := Parse(u)
	if !ok || mt != "image/png" || !bytes.Equal(d, png) {
		t.Fatalf("%q %q %v", mt, d, ok)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, mt, data string
		ok           bool
	}{
		{"data:text/plain;charset=utf-8,a%20b", "text/plain;charset=utf-8", "a b", true},
		{"DATA:image/gif;BASE64,R0lGOA", "image/gif", "GIF8", true}, // no padding, any case
		{"data:,hello", "", "hello", true},
		{"data:image/png;base64,!!!", "", "", false},
		{"data:image/png;base64", "", "", false},
		{"https://example.com/a.png", "", "", false},
		{"data:text/plain,%zz", "", "", false},
	} {
		mt, d, ok := Parse(tc.in)
		if ok != tc.ok || mt != tc.mt || string(d) != tc.data {
			t.Errorf("%q: %q %q %v", tc.in, mt, d, ok)
		}
	}
}

func TestInline(t *testing.T) {
	if mt, d, ok := Inline("", "audio/wav", []byte("x")); !ok || mt != "audio/wav" || string(d) != "x" {
		t.Error("inline bytes")
	}
	if mt, d, ok := Inline("data:audio/mpeg;base64,eA==", "", nil); !ok || mt != "audio/mpeg" || string(d) != "x" {
		t.Errorf("data URL: %q %q", mt, d)
	}
	if _, _, ok := Inline("https://example.com/a.wav", "", nil); ok {
		t.Error("a remote URL is not inline")
	}
	if MediaType(" text/html; charset=utf-8") != "text/html" {
		t.Error("MediaType")
	}
}
