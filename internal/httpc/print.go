package httpc

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/runlet/runlet/internal/safehttp"
	"github.com/runlet/runlet/internal/secret"
)

// plainClient is a Client's exported fields, with Header and Secrets
// masked: what a Client prints, logs and marshals as.
type plainClient struct {
	Provider               string
	HTTP                   *http.Client `json:"-"`
	MaxRetries             int
	Header                 http.Header
	MinBackoff, MaxBackoff time.Duration
	MaxRetryWait           time.Duration
	Secrets                []string
	Policy                 safehttp.Policy
}

func (c *Client) masked() plainClient {
	secrets := make([]string, len(c.Secrets))
	for i := range secrets {
		secrets[i] = secret.Mask
	}
	return plainClient{Provider: c.Provider, HTTP: c.HTTP, MaxRetries: c.MaxRetries, Header: secret.Header(c.Header),
		MinBackoff: c.MinBackoff, MaxBackoff: c.MaxBackoff, MaxRetryWait: c.MaxRetryWait, Secrets: secrets, Policy: c.Policy}
}

// Format prints the Client with Header's values and Secrets masked.
func (c *Client) Format(s fmt.State, verb rune) { secret.Format(s, verb, "*httpc.Client", c.masked()) }

// LogValue is the Client with its credentials masked.
func (c *Client) LogValue() slog.Value { return slog.AnyValue(c.masked()) }

// MarshalJSON encodes the Client with its credentials masked.
func (c *Client) MarshalJSON() ([]byte, error) { return json.Marshal(c.masked()) }
