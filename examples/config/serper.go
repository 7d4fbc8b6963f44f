package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
)

// SerperParams are the params of a serper tool in a config file.
type SerperParams struct {
	// APIKey may read any environment variable: it is a credential.
	APIKey string `yaml:"api_key" config:"credential"`
	// Type is search (the default), news or images.
	Type string `yaml:"type"`
	// Endpoint is the API root; tests point it at a local server.
	Endpoint string `yaml:"endpoint"`
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"what to search for"`
}

// serper is a tool factory: each configured tool searches Google through
// serper.dev with its own params.
var serper = config.Factory(func(name string, p SerperParams) (runlet.Tool, error) {
	switch p.Type {
	case "":
		p.Type = "search"
	case "search", "news", "images":
	default:
		return nil, fmt.Errorf("type %q: want search, news or images", p.Type)
	}
	if p.Endpoint == "" {
		p.Endpoint = "https://google.serper.dev"
	}
	client := &http.Client{}
	return runlet.NewTool(name, "Searches Google ("+p.Type+") and returns the results as JSON.",
		func(ctx context.Context, in searchArgs) (string, error) {
			if p.APIKey == "" {
				return "", errors.New("no API key: set SERPER_API_KEY")
			}
			body, _ := json.Marshal(map[string]string{"q": in.Query})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(p.Endpoint, "/")+"/"+p.Type, bytes.NewReader(body))
			if err != nil {
				return "", err
			}
			req.Header.Set("X-API-KEY", p.APIKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return "", fmt.Errorf("search failed: %w", errors.Unwrap(err)) // the URL is no secret, but keep errors short
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			if err != nil {
				return "", err
			}
			if resp.StatusCode != http.StatusOK {
				return "", fmt.Errorf("search failed: HTTP %d", resp.StatusCode)
			}
			return string(out), nil
		}), nil
})
