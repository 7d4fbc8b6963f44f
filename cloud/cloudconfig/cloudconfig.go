// Package cloudconfig gives package config (and the runlet command built
// in cloud/cmd/runlet) the clouds' credentials, which the main module does
// not link:
//
//	loader := &config.Loader{Providers: cloudconfig.Openers()}
//	setup, err := loader.Load("agent.yaml") // provider: bedrock | vertex | azure
//
// provider: bedrock builds a cloud/bedrock adapter (the AWS SDK's
// credential chain, the section's region); provider: vertex gets its
// tokens from Application Default Credentials (cloud/vertex); provider:
// azure and azure-responses without an API key get Entra ID tokens from
// DefaultAzureCredential (cloud/azure). Each credential is looked for
// when a config names its cloud, not before.
package cloudconfig

import (
	"context"
	"net/http"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/azure"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/vertex"
	"github.com/runlet/runlet/config"
)

// Openers returns the openers of every cloud this module reaches.
func Openers() config.ProviderOpeners {
	return config.ProviderOpeners{
		Bedrock: openBedrock,
		GoogleToken: func() (func(context.Context) (string, error), string, error) {
			creds, err := vertex.DefaultCredentials(context.Background())
			if err != nil {
				return nil, "", err
			}
			return creds.Token, creds.Project, nil
		},
		EntraToken: azure.DefaultToken,
	}
}

// openBedrock builds provider: bedrock from a model section.
func openBedrock(m config.Model, hc *http.Client) (runlet.Model, error) {
	var headers http.Header
	if len(m.Headers) > 0 {
		headers = http.Header{}
		for k, v := range m.Headers {
			headers.Set(k, v)
		}
	}
	retries := 0
	if m.MaxRetries != nil {
		if retries = *m.MaxRetries; retries == 0 {
			retries = -1 // the adapter reads 0 as "default"
		}
	}
	return bedrock.New(context.Background(), bedrock.Config{
		Model: m.Name, Region: m.Region, APIKey: m.APIKey, BaseURL: m.BaseURL,
		HTTPClient: hc, Headers: headers, MaxRetries: retries,
		AllowInsecureHTTP: m.AllowInsecureHTTP, StreamIdleTimeout: m.StreamIdleTimeout,
	})
}
