package gemini

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/runlet/runlet/internal/secret"
)

// Printing a Config never prints a credential: it prints (every fmt verb),
// logs (slog) and marshals to JSON with APIKey and every Headers value
// masked as [REDACTED], and BaseURL without user info or query values.
// plainConfig has no methods, so the masked copy prints field by field.
type plainConfig Config

// masked is c with its credentials masked.
func (c Config) masked() plainConfig {
	c.APIKey = secret.String(c.APIKey)
	c.Headers = secret.Header(c.Headers)
	c.BaseURL = secret.URL(c.BaseURL)
	return plainConfig(c)
}

// Format prints c with its credentials masked, for every verb.
func (c Config) Format(s fmt.State, verb rune) { secret.Format(s, verb, "gemini.Config", c.masked()) }

// LogValue is c with its credentials masked.
func (c Config) LogValue() slog.Value { return slog.AnyValue(c.masked()) }

// MarshalJSON encodes c with its credentials masked, without HTTPClient
// (for logs and diagnostics; it does not round-trip).
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.masked()) }

// view is what an adapter prints as: its name, URL and model, never its
// key or headers (fmt would print its unexported fields raw).
type view struct{ Provider, URL, Model string }

// Format prints m as its provider name, URL (masked as Config's) and
// model, for every verb.
func (m *Model) Format(s fmt.State, verb rune) {
	secret.Format(s, verb, "*gemini.Model", view{Provider: m.cfg.name, URL: secret.URL(m.cfg.base), Model: m.cfg.model})
}
