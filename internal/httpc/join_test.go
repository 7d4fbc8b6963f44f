package httpc

import "testing"

// An endpoint's URL keeps the root's query (Azure's api-version) after the
// appended path, instead of "?api-version=x/chat/completions".
func TestJoinURL(t *testing.T) {
	tests := []struct{ base, path, want string }{
		{"https://api.openai.com/v1", "/chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"https://api.openai.com/v1/", "/responses", "https://api.openai.com/v1/responses"},
		{"https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", "/chat/completions",
			"https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"},
		{"https://r.openai.azure.com/openai/deployments/d/?api-version=2024-10-21", "/responses",
			"https://r.openai.azure.com/openai/deployments/d/responses?api-version=2024-10-21"},
		{"https://g.example/v1beta?key=k", "/models/a%2Fb:streamGenerateContent?alt=sse",
			"https://g.example/v1beta/models/a%2Fb:streamGenerateContent?key=k&alt=sse"},
		{"https://g.example/v1beta", "/models/m:streamGenerateContent?alt=sse", "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse"},
		{"https://x.example/api#frag", "/v1/messages", "https://x.example/api/v1/messages"},
	}
	for _, tt := range tests {
		if got := JoinURL(tt.base, tt.path); got != tt.want {
			t.Errorf("JoinURL(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
	if got := URLPath("https://x.example/v1/?a=b#c"); got != "https://x.example/v1" {
		t.Errorf("URLPath = %q", got)
	}
}
