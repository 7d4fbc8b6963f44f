package secret

import (
	"fmt"
	"net/http"
	"testing"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                            "",
		"https://api.example.com/v1":  "https://api.example.com/v1",
		"http://127.0.0.1:11434/v1":   "http://127.0.0.1:11434/v1",
		"https://u:p@h/x":             "https://[REDACTED]@h/x",
		"https://tok@h":               "https://[REDACTED]@h",
		"https://h/x?key=k1&a=b&flag": "https://h/x?key=[REDACTED]&a=[REDACTED]&flag=[REDACTED]",
		"https://h/x#access_token=t":  "https://h/x#[REDACTED]",
		"host:u@p":                    "[REDACTED]",
		"://bad":                      "[REDACTED]",
		"https://h/a%20b?k=v":         "https://h/a%20b?k=[REDACTED]",
		"/relative?token=t":           "/relative?token=[REDACTED]",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValuesAndHeader(t *testing.T) {
	if got := fmt.Sprint(Values(map[string]string{"A": "s", "B": ""})); got != "map[A:[REDACTED] B:]" {
		t.Errorf("Values = %s", got)
	}
	h := http.Header{"Authorization": {"Bearer k"}}
	if got := fmt.Sprint(Header(h)); got != "map[Authorization:[[REDACTED]]]" || h.Get("Authorization") != "Bearer k" {
		t.Errorf("Header = %s, original %v", got, h)
	}
	if Values(nil) != nil || Header(nil) != nil {
		t.Error("nil is not kept nil")
	}
}
