package bedrock

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/runlet/runlet/internal/secret"
)

// Printing a Config never prints a credential: it prints (every fmt verb),
// logs (slog) and marshals to JSON with APIKey and every Headers value
// masked, BaseURL without user info or query values, and Credentials
// only as whether one is set (a static provider holds the secret key
// itself), never HTTPClient or OnResponse.
type plainConfig struct {
	Model, Region, Profile string
	Credentials            string              `json:",omitempty"`
	APIKey                 string              `json:",omitempty"`
	BaseURL                string              `json:",omitempty"`
	Headers                map[string][]string `json:",omitempty"`
	AllowInsecureHTTP      bool                `json:",omitempty"`
	MaxRetries             int                 `json:",omitempty"`
	MaxResponseBytes       int64               `json:",omitempty"`
	StreamIdleTimeout      string              `json:",omitempty"`
	Name                   string              `json:",omitempty"`
}

// masked is c with its credentials masked.
func (c Config) masked() plainConfig {
	p := plainConfig{Model: c.Model, Region: c.Region, Profile: c.Profile, APIKey: secret.String(c.APIKey),
		BaseURL: secret.URL(c.BaseURL), Headers: secret.Header(c.Headers), AllowInsecureHTTP: c.AllowInsecureHTTP,
		MaxRetries: c.MaxRetries, MaxResponseBytes: c.MaxResponseBytes, Name: c.Name}
	if c.Credentials != nil {
		p.Credentials = secret.Mask
	}
	if c.StreamIdleTimeout != 0 {
		p.StreamIdleTimeout = c.StreamIdleTimeout.String()
	}
	return p
}

// Format prints c with its credentials masked, for every verb.
func (c Config) Format(s fmt.State, verb rune) { secret.Format(s, verb, "bedrock.Config", c.masked()) }

// LogValue is c with its credentials masked.
func (c Config) LogValue() slog.Value { return slog.AnyValue(c.masked()) }

// MarshalJSON encodes c with its credentials masked (for logs and
// diagnostics; it does not round-trip).
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.masked()) }

// view is what an adapter prints as: its name, endpoint, Region and
// model, never its credentials.
type view struct{ Provider, URL, Region, Model string }

// Format prints m as its provider name, endpoint, Region and model, for
// every verb.
func (m *Model) Format(s fmt.State, verb rune) {
	secret.Format(s, verb, "*bedrock.Model", view{Provider: m.cfg.name, URL: secret.URL(m.cfg.base), Region: m.cfg.region, Model: m.cfg.model})
}

// LogValue is what Format prints.
func (m *Model) LogValue() slog.Value {
	return slog.AnyValue(view{Provider: m.cfg.name, URL: secret.URL(m.cfg.base), Region: m.cfg.region, Model: m.cfg.model})
}
