package openai

import (
	"errors"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
)

// ErrMalformedStream (the same value as runlet.ErrMalformedStream) is
// wrapped by the *runlet.ProviderError returned when a stream event or a
// response body is not the data the API defines (both adapters).
var ErrMalformedStream = runlet.ErrMalformedStream

// apiKey returns the bearer token the client sends, or "".
func apiKey(h http.Header) string {
	key, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(key)
}

// redactSecret removes the API key from a *runlet.ProviderError's text
// fields. Errors never carry request headers, but a misbehaving server or
// proxy may echo the key back in an error body or stream event; the key must
// still never reach an error, event or log. Other errors pass unchanged.
func redactSecret(err error, h http.Header) error {
	key := apiKey(h)
	if err == nil || len(key) < 4 {
		return err
	}
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) {
		return err
	}
	const mask = "[REDACTED]"
	pe.Message = strings.ReplaceAll(pe.Message, key, mask)
	pe.Code = strings.ReplaceAll(pe.Code, key, mask)
	pe.Type = strings.ReplaceAll(pe.Type, key, mask)
	if pe.Err != nil && strings.Contains(pe.Err.Error(), key) {
		msg := strings.ReplaceAll(pe.Err.Error(), key, mask)
		if errors.Is(pe.Err, runlet.ErrStreamIncomplete) {
			pe.Err = &redactedError{msg: msg, sentinel: runlet.ErrStreamIncomplete}
		} else {
			pe.Err = &redactedError{msg: msg}
		}
	}
	return err
}

// redactedError replaces an error whose text held a secret. It keeps the
// sentinel the original wrapped, not the original itself.
type redactedError struct {
	msg      string
	sentinel error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.sentinel }
