package mcp

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/runlet/runlet/internal/secret"
)

// Printing a ServerConfig never prints a credential: it prints, logs
// (slog) and marshals to JSON with every Env and Headers value masked as
// [REDACTED] and its URL without user info, query values or fragment.
// plainServerConfig has no methods, so the masked copy prints field by
// field.
type plainServerConfig ServerConfig

// masked is c with its credentials masked.
func (c ServerConfig) masked() ServerConfig {
	c.Env = secret.Values(c.Env)
	c.Headers = secret.Values(c.Headers)
	c.URL = secret.URL(c.URL)
	return c
}

// Format prints c with its credentials masked, for every verb.
func (c ServerConfig) Format(s fmt.State, verb rune) {
	secret.Format(s, verb, "mcp.ServerConfig", plainServerConfig(c.masked()))
}

// LogValue is c with its credentials masked.
func (c ServerConfig) LogValue() slog.Value { return slog.AnyValue(plainServerConfig(c.masked())) }

// MarshalJSON encodes c with its credentials masked, without Stderr,
// HTTPClient and Transport.
func (c ServerConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(plainServerConfig(c.masked()))
}

// Format prints ts as its server's name: ts's fields hold the ServerConfig,
// and fmt prints unexported fields without asking them to mask themselves.
func (ts *Toolset) Format(s fmt.State, verb rune) {
	fmt.Fprintf(s, "&mcp.Toolset{server: %s}", ts.cfg.displayName())
}
