package httpc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/safehttp"
)

// Redaction settings.
const (
	// Mask replaces a secret, or any part of one, in an error.
	Mask = "[REDACTED]"
	// minFragment is the shortest part of a secret that is masked on its
	// own: a body cut in the middle of a key keeps no 8 characters of it.
	minFragment = 8
	// minSecret is the shortest secret redacted at all (shorter ones would
	// mask ordinary words).
	minSecret = 4
	// maxMessage bounds ProviderError.Message, in bytes, after masking.
	maxMessage = 500
)

// credentialHeaders are the request headers that carry an API key.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key"}

// secrets returns the credentials the client sends, and its Secrets.
func (c *Client) secrets() []string {
	out := append(c.tokens.list(), c.Secrets...)
	for _, h := range slices.Concat(credentialHeaders, c.Policy.SecretHeaders) {
		for _, v := range c.Header.Values(h) {
			if _, tok, ok := strings.Cut(v, " "); ok && strings.HasSuffix(h, "Authorization") {
				v = tok // "Bearer <key>"
			}
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// Redact removes the client's credentials (see Redact) from err.
func (c *Client) Redact(err error) error { return Redact(err, c.secrets()...) }

// redactCall removes from err the client's credentials and those call's
// URL carries (user info, a ?key=), which a server may echo in its error
// body.
func (c *Client) redactCall(call Call, err error) error {
	return Redact(err, append(c.secrets(), safehttp.URLSecrets(call.URL)...)...)
}

// Redact is the one secret redactor of the adapters. It masks every
// occurrence of a secret, and of any 8 or more consecutive characters of
// one, in every text field of the *runlet.ProviderError in err (Message,
// Code, Type, RequestID, Provider, and its cause's text), and only then
// shortens Message to 500 bytes, so a message cut in the middle of a key
// keeps no recognisable part of it. Sentinels the cause wrapped still
// match errors.Is. An error that is not a ProviderError but whose text
// holds a secret is replaced the same way. Secrets shorter than 4 bytes
// are ignored.
func Redact(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	var keep []string
	for _, s := range secrets {
		if len(s) >= minSecret {
			keep = append(keep, s)
		}
	}
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) {
		if msg := maskSecrets(err.Error(), keep); msg != err.Error() {
			return &redactedError{msg: msg, cause: err}
		}
		return err
	}
	pe.Message = shorten(maskSecrets(pe.Message, keep), maxMessage)
	pe.Code = maskSecrets(pe.Code, keep)
	pe.Type = maskSecrets(pe.Type, keep)
	pe.RequestID = maskSecrets(pe.RequestID, keep)
	pe.Provider = maskSecrets(pe.Provider, keep)
	if pe.Err != nil {
		if msg := maskSecrets(pe.Err.Error(), keep); msg != pe.Err.Error() {
			pe.Err = &redactedError{msg: msg, cause: pe.Err}
		}
	}
	return err
}

// MaskSecrets masks in s every secret of 4 bytes or more, and every run
// of 8 or more bytes that is part of one, as Redact does: for errors that
// are not an adapter's (the MCP client's).
func MaskSecrets(s string, secrets ...string) string {
	var keep []string
	for _, k := range secrets {
		if len(k) >= minSecret {
			keep = append(keep, k)
		}
	}
	return maskSecrets(s, keep)
}

// maskSecrets replaces each secret, and each run of minFragment or more
// bytes of s that is part of a secret, with Mask.
func maskSecrets(s string, secrets []string) string {
	for _, k := range secrets {
		if len(s) < minSecret {
			return s
		}
		if len(k) < minFragment {
			s = strings.ReplaceAll(s, k, Mask)
			continue
		}
		s = maskFragments(s, k)
	}
	return s
}

// maskFragments masks every run of s covered by minFragment-byte windows
// that occur in key.
func maskFragments(s, key string) string {
	if len(s) < minFragment {
		return s
	}
	grams := make(map[string]struct{}, len(key))
	for i := 0; i+minFragment <= len(key); i++ {
		grams[key[i:i+minFragment]] = struct{}{}
	}
	var covered []bool
	for i := 0; i+minFragment <= len(s); i++ {
		if _, ok := grams[s[i:i+minFragment]]; ok {
			if covered == nil {
				covered = make([]bool, len(s))
			}
			for j := i; j < i+minFragment; j++ {
				covered[j] = true
			}
		}
	}
	if covered == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !covered[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		for i < len(s) && covered[i] {
			i++
		}
		b.WriteString(Mask)
	}
	return b.String()
}

// shorten cuts s to at most n bytes (on a rune boundary) plus "…".
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// redactedError stands for an error whose text held a secret. errors.Is
// still matches the sentinels its cause wrapped; the cause itself is not
// reachable, as its text holds the secret.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }

// sentinels are the errors a redacted cause keeps for errors.Is.
var sentinels = []error{
	runlet.ErrStreamIncomplete, runlet.ErrMalformedStream, runlet.ErrInvalidRequest, runlet.ErrResponseTooLarge,
	context.Canceled, context.DeadlineExceeded,
}

// Unwrap returns the sentinels the cause wrapped.
func (e *redactedError) Unwrap() []error {
	var out []error
	for _, s := range sentinels {
		if errors.Is(e.cause, s) {
			out = append(out, s)
		}
	}
	return out
}
