package config

import (
	"net/http"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
)

// newModel builds the provider adapter the model section names.
func (l *Loader) newModel(m Model) (runlet.Model, error) {
	var headers http.Header
	if len(m.Headers) > 0 {
		headers = http.Header{}
		for k, v := range m.Headers {
			headers.Set(k, v)
		}
	}
	retries := 0
	if m.MaxRetries != nil {
		retries = *m.MaxRetries
		if retries == 0 {
			retries = -1 // the adapters read 0 as "default"
		}
	}
	oc := openai.Config{
		APIKey: m.APIKey, BaseURL: m.BaseURL, Model: m.Name,
		HTTPClient: l.HTTPClient, Headers: headers, MaxRetries: retries,
		AllowInsecureHTTP: m.AllowInsecureHTTP, StreamIdleTimeout: m.StreamIdleTimeout,
	}
	if model, ok, err := l.newCloudModel(m, oc); ok {
		return model, err
	}
	switch m.Provider {
	case "openai":
		return openai.NewChatCompletions(oc), nil
	case "openai-responses":
		return openai.NewResponses(oc), nil
	case "anthropic":
		return anthropic.NewMessages(anthropic.Config{
			APIKey: m.APIKey, BaseURL: m.BaseURL, Model: m.Name,
			HTTPClient: l.HTTPClient, Headers: headers, MaxRetries: retries,
			AllowInsecureHTTP: m.AllowInsecureHTTP, StreamIdleTimeout: m.StreamIdleTimeout,
		}), nil
	case "gemini":
		return gemini.New(gemini.Config{
			APIKey: m.APIKey, BaseURL: m.BaseURL, Model: m.Name,
			HTTPClient: l.HTTPClient, Headers: headers, MaxRetries: retries,
			AllowInsecureHTTP: m.AllowInsecureHTTP, StreamIdleTimeout: m.StreamIdleTimeout,
		}), nil
	}
	p, ok := openai.Presets[m.Provider]
	if !ok {
		return nil, unknownProvider(m.Provider)
	}
	cfg := p.Config(m.Name)
	if m.BaseURL != "" {
		cfg.BaseURL = m.BaseURL
	}
	if m.APIKey != "" {
		cfg.APIKey = m.APIKey
	}
	cfg.HTTPClient, cfg.Headers, cfg.MaxRetries = l.HTTPClient, headers, retries
	cfg.AllowInsecureHTTP, cfg.StreamIdleTimeout = m.AllowInsecureHTTP, m.StreamIdleTimeout
	return openai.NewChatCompletions(cfg), nil
}
