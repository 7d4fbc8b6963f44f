package httpc

import "strings"

// JoinURL appends path to base's path, keeping base's query: an
// endpoint's URL from an API root. A root may carry a query the server
// requires (Azure OpenAI's deployment URLs end in ?api-version=...); path
// may carry one of its own ("?alt=sse"), and the two are joined. A
// fragment of base is dropped; a trailing slash is not doubled. It works
// on the text, so an escaped path (a model name through url.PathEscape)
// is not escaped again.
//
//	JoinURL("https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", "/chat/completions")
//	= "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
func JoinURL(base, path string) string {
	base, _, _ = strings.Cut(base, "#")
	base, query, _ := strings.Cut(base, "?")
	path, pathQuery, _ := strings.Cut(path, "?")
	u := strings.TrimRight(base, "/") + path
	switch {
	case query != "" && pathQuery != "":
		return u + "?" + query + "&" + pathQuery
	case query != "":
		return u + "?" + query
	case pathQuery != "":
		return u + "?" + pathQuery
	}
	return u
}

// URLPath returns base without its query and fragment, and without a
// trailing slash: what an adapter inspects to choose a path (a root
// ending in /v1, say).
func URLPath(base string) string {
	base, _, _ = strings.Cut(base, "#")
	base, _, _ = strings.Cut(base, "?")
	return strings.TrimRight(base, "/")
}
