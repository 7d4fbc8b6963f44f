package gemini

import (
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit/modeltest"
)

// TestModelContract runs the Model conformance suite.
func TestModelContract(t *testing.T) {
	modeltest.Run(t, modeltest.GeminiWire, func(t *testing.T, s modeltest.Server) runlet.Model {
		return New(Config{BaseURL: s.BaseURL, APIKey: s.APIKey, HTTPClient: s.HTTPClient,
			MaxResponseBytes: s.MaxResponseBytes, MaxRetries: -1, Model: "gemini-test"})
	})
}
