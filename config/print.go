package config

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/runlet/runlet/internal/secret"
)

// Printing a config never prints a credential: File, Model and MCPServer
// print, log (slog) and marshal to JSON with their credential fields
// (tagged config:"credential") masked: the API key and every header and
// env value as [REDACTED], the URLs without user info, query values or
// fragment. Each method prints a masked copy converted to a plain type
// (plainModel, ...) that has no methods, so it prints field by field.
type (
	plainFile      File
	plainModel     Model
	plainMCPServer MCPServer
)

// masked is m with its credentials masked.
func (m Model) masked() Model {
	m.APIKey = secret.String(m.APIKey)
	m.BaseURL = secret.URL(m.BaseURL)
	m.Headers = secret.Values(m.Headers)
	return m
}

// masked is s with its credentials masked.
func (s MCPServer) masked() MCPServer {
	s.URL = secret.URL(s.URL)
	s.Headers = secret.Values(s.Headers)
	s.Env = secret.Values(s.Env)
	return s
}

// masked is f without the positions Decode recorded, which hold the values
// as written; its Model and MCPServers mask themselves.
func (f File) masked() File {
	f.pos = nil
	return f
}

// Format prints f with its credentials masked, for every verb.
func (f File) Format(s fmt.State, verb rune) {
	secret.Format(s, verb, "config.File", plainFile(f.masked()))
}

// LogValue is f with its credentials masked.
func (f File) LogValue() slog.Value { return slog.AnyValue(plainFile(f.masked())) }

// MarshalJSON encodes f with its credentials masked.
func (f File) MarshalJSON() ([]byte, error) { return json.Marshal(plainFile(f.masked())) }

// Format prints m with its credentials masked, for every verb.
func (m Model) Format(s fmt.State, verb rune) {
	secret.Format(s, verb, "config.Model", plainModel(m.masked()))
}

// LogValue is m with its credentials masked.
func (m Model) LogValue() slog.Value { return slog.AnyValue(plainModel(m.masked())) }

// MarshalJSON encodes m with its credentials masked.
func (m Model) MarshalJSON() ([]byte, error) { return json.Marshal(plainModel(m.masked())) }

// Format prints s with its credentials masked, for every verb.
func (s MCPServer) Format(st fmt.State, verb rune) {
	secret.Format(st, verb, "config.MCPServer", plainMCPServer(s.masked()))
}

// LogValue is s with its credentials masked.
func (s MCPServer) LogValue() slog.Value { return slog.AnyValue(plainMCPServer(s.masked())) }

// MarshalJSON encodes s with its credentials masked.
func (s MCPServer) MarshalJSON() ([]byte, error) { return json.Marshal(plainMCPServer(s.masked())) }
