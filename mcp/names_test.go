package mcp

import (
	"regexp"
	"strings"
	"testing"
)

// openAIName is what OpenAI accepts as a function name.
var openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		prefix, name, want string
	}{
		{"", "get_weather", "get_weather"},
		{"", "get-weather", "get-weather"},
		{"", "files.read", "files_read"},
		{"", "a b/c:d", "a_b_c_d"},
		{"", "café", "caf_"}, // one '_' per rune, not per byte
		{"", "天気", "__"},     // non-ASCII
		{"gh_", "search.issues", "gh_search_issues"},
		{"", "", "tool"},
		{"", strings.Repeat("a", 64), strings.Repeat("a", 64)},
		// The hash is part of a name stored sessions refer to: keep it stable.
		{"", long, strings.Repeat("x", 55) + "_" + "a47cb06f"},
		{"p_", long, "p_" + strings.Repeat("x", 53) + "_" + "15507910"},
	}
	for _, tt := range tests {
		got := toolName(sanitize(tt.prefix), tt.name)
		if !openAIName.MatchString(got) {
			t.Errorf("toolName(%q, %q) = %q, not a valid OpenAI name", tt.prefix, tt.name, got)
		}
		if got != tt.want {
			t.Errorf("toolName(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
		}
	}
	// Long names that share their first 64 bytes stay distinct.
	if a, b := toolName("", long+"a"), toolName("", long+"b"); a == b {
		t.Errorf("%q and %q: same name %q", long+"a", long+"b", a)
	}
}

func FuzzToolName(f *testing.F) {
	f.Add("", "get_weather")
	f.Add("gh.", "search.issues")
	f.Add("", strings.Repeat("é", 70))
	f.Fuzz(func(t *testing.T, prefix, name string) {
		got := toolName(sanitize(prefix), name)
		if !openAIName.MatchString(got) {
			t.Fatalf("toolName(%q, %q) = %q, not a valid OpenAI name", prefix, name, got)
		}
		if again := toolName(sanitize(prefix), name); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
	})
}
