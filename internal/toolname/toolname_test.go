package toolname

import (
	"regexp"
	"strings"
	"testing"
)

var valid64 = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestMake(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tt := range []struct{ prefix, name, fallback, want string }{
		{"", "get_weather", "tool", "get_weather"},
		{"", "files.read", "tool", "files_read"},
		{"", "café", "tool", "caf_"}, // one '_' per character, not per byte
		{"", "Müller", "agent", "M_ller"},
		{"", "\xff\xfe", "tool", "__"},
		{"", "", "agent", "agent"},
		{"transfer_to_", "", "agent", "transfer_to_agent"},
		{"gh_", "search.issues", "tool", "gh_search_issues"},
		{"", strings.Repeat("a", 64), "tool", strings.Repeat("a", 64)},
		// Stored conversations refer to these names: the hash never changes.
		{"", long, "tool", strings.Repeat("x", 55) + "_a47cb06f"},
		{"p_", long, "tool", "p_" + strings.Repeat("x", 53) + "_15507910"},
	} {
		got := Make(tt.prefix, tt.name, tt.fallback)
		if got != tt.want || !valid64.MatchString(got) {
			t.Errorf("Make(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
		}
	}
	if a, b := Make("", long+"a", ""), Make("", long+"b", ""); a == b {
		t.Errorf("long names sharing their first 64 bytes: both %q", a)
	}
}
