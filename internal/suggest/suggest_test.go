package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"max_turn", "max_turns", 1}, {"rnu", "run", 1}, {"calculater", "calculator", 1},
		{"ab", "ba", 1}, {"héllo", "hello", 1}, {"A", "a", 1},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	providers := []string{"anthropic", "openai", "openai-responses", "ollama", "vllm", "deepseek"}
	for _, tt := range []struct {
		s    string
		want string
	}{
		{"antropic", "anthropic"},
		{"ANTHROPIC", "anthropic"}, // case is not a typo
		{"anthorpic", "anthropic"}, // a transposition is one edit
		{"open", "openai"},         // a prefix
		{"ollam", "ollama"},
		{"x", ""},
		{"postgres", ""},
		{"", ""},
	} {
		if got := Closest(tt.s, providers); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	if got := Hint("rnu", []string{"run", "chat"}); got != `; did you mean "run"?` {
		t.Errorf("Hint = %q", got)
	}
	if got := Hint("zzz", []string{"run", "chat"}); got != "" {
		t.Errorf("Hint = %q", got)
	}
}
