package httpc

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/runlet/runlet"
)

// TokenFunc returns the access token of one request, sent as
// "Authorization: Bearer TOKEN". It is the adapters' one credential seam
// for tokens that expire (Vertex AI's from Google's Application Default
// Credentials, Azure's from Entra ID): it is asked before every attempt,
// so it must cache its token and refresh it itself, as
// golang.org/x/oauth2's ReuseTokenSource and azcore's credentials do. Its
// error should say which credential source it tried.
type TokenFunc = func(ctx context.Context) (string, error)

// WithToken sets Token and returns c.
func (c *Client) WithToken(token TokenFunc) *Client {
	c.Token = token
	return c
}

// keptTokens is how many distinct tokens a Client remembers for redaction:
// a token stays masked in errors after it was refreshed away.
const keptTokens = 8

// tokens remembers the last tokens a Client sent, so Redact masks them.
type tokens struct {
	mu   sync.Mutex
	seen []string
}

func (t *tokens) add(tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.seen, tok); i >= 0 {
		t.seen = slices.Delete(t.seen, i, i+1)
	}
	if len(t.seen) == keptTokens {
		t.seen = t.seen[1:]
	}
	t.seen = append(t.seen, tok)
}

func (t *tokens) list() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.seen)
}

// authorize sets req's Authorization header from c.Token, if set. A
// failure to get a token is a final *runlet.ProviderError that wraps the
// token source's error (which names the source it tried), redacted like
// every other; a cancelled ctx returns ctx's error.
func (c *Client) authorize(ctx context.Context, req *http.Request) error {
	if c.Token == nil {
		return nil
	}
	tok, err := c.Token(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &runlet.ProviderError{Provider: c.Provider, Message: "getting an access token: " + err.Error(), Err: err}
	}
	if tok == "" {
		return &runlet.ProviderError{Provider: c.Provider, Message: "getting an access token: the token source returned an empty token", Err: runlet.ErrInvalidRequest}
	}
	c.tokens.add(tok)
	req.Header["Authorization"] = []string{"Bearer " + tok}
	return nil
}
