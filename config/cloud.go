package config

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
)

// ProviderOpeners reach the clouds whose credentials need a cloud SDK,
// which this package does not link (as StoreOpeners do for database
// drivers): the nested module github.com/runlet/runlet/cloud provides them
// (cloud/cloudconfig.Openers), and its CLI, cloud/cmd/runlet, sets them
// all. A file naming provider bedrock or vertex without its opener is an
// *Error that says where to get one; provider azure needs EntraToken only
// when it has no API key.
type ProviderOpeners struct {
	// Bedrock builds the model of provider: bedrock (Amazon Bedrock's
	// Converse API, signed with the AWS SDK's credential chain).
	Bedrock func(m Model, hc *http.Client) (runlet.Model, error)
	// GoogleToken returns the token source of Application Default
	// Credentials for Vertex AI, and the project they name (if any), for
	// provider: vertex. Its error says which source it tried.
	GoogleToken func() (token func(context.Context) (string, error), project string, err error)
	// EntraToken returns an Entra ID token source for Azure OpenAI, for
	// provider: azure or azure-responses with no API key. Its error says
	// which sources it tried.
	EntraToken func() (func(context.Context) (string, error), error)
}

// cloudOnly are the providers that always need a ProviderOpeners func.
var cloudOnly = []string{"bedrock", "vertex"}

// azureProviders are Azure OpenAI's two APIs.
var azureProviders = []string{"azure", "azure-responses"}

// has reports whether o can build provider p's credentials.
func (o ProviderOpeners) has(p string) bool {
	switch p {
	case "bedrock":
		return o.Bedrock != nil
	case "vertex":
		return o.GoogleToken != nil
	}
	return true
}

// cloudCommand is how a user reaches the clouds, for errors.
const cloudCommand = "in Go, set Loader.Providers (github.com/runlet/runlet/cloud/cloudconfig.Openers); from a shell, use the runlet command of the cloud module: cd cloud && go run ./cmd/runlet (in a clone of the repository), or go install github.com/runlet/runlet/cloud/cmd/runlet@latest"

// validateCloud checks that the model section's cloud keys belong to its
// provider, and that the Loader can reach a cloud it names.
func (l *Loader) validateCloud(f *File, bad fieldSet) []error {
	m := f.Model
	if bad.under("model.provider") {
		return nil
	}
	var errs []error
	for _, k := range []struct {
		field, value string
		owners       []string
	}{
		{"region", m.Region, []string{"bedrock"}},
		{"project", m.Project, []string{"vertex"}},
		{"location", m.Location, []string{"vertex"}},
		{"deployment", m.Deployment, azureProviders},
		{"api_version", m.APIVersion, azureProviders},
	} {
		if k.value != "" && !slices.Contains(k.owners, m.Provider) && !bad.under("model."+k.field) {
			errs = append(errs, f.errAt("model."+k.field, k.value, "only for provider %s", strings.Join(k.owners, " or ")))
		}
	}
	if slices.Contains(cloudOnly, m.Provider) && !l.Providers.has(m.Provider) {
		errs = append(errs, f.errAt("model.provider", m.Provider, "%s", noCloud(m.Provider)))
	}
	return errs
}

// noCloud is the error of a cloud provider the program cannot reach.
func noCloud(p string) error {
	return fmt.Errorf("this program cannot reach %s: its credentials need a cloud SDK that this build does not link; %s", cloudName(p), cloudCommand)
}

func cloudName(p string) string {
	switch p {
	case "bedrock":
		return "Amazon Bedrock"
	case "vertex":
		return "Vertex AI"
	}
	return "Azure OpenAI with Entra ID"
}

// newCloudModel builds the model of a cloud provider (bedrock, vertex,
// azure, azure-responses); ok is false for any other.
func (l *Loader) newCloudModel(m Model, oc openai.Config) (model runlet.Model, ok bool, err error) {
	switch m.Provider {
	case "bedrock":
		if l.Providers.Bedrock == nil {
			return nil, true, noCloud(m.Provider)
		}
		model, err = l.Providers.Bedrock(m, l.HTTPClient)
		return model, true, err
	case "vertex":
		model, err = l.newVertex(m, oc)
		return model, true, err
	case "azure", "azure-responses":
		model, err = l.newAzure(m, oc)
		return model, true, err
	}
	return nil, false, nil
}

// newVertex builds Gemini or, for a claude-* model, Claude on Vertex AI.
// The project is the section's, else $GOOGLE_CLOUD_PROJECT, else the
// credentials'; the location the section's, else
// $GOOGLE_CLOUD_LOCATION, else global.
func (l *Loader) newVertex(m Model, oc openai.Config) (runlet.Model, error) {
	if l.Providers.GoogleToken == nil {
		return nil, noCloud(m.Provider)
	}
	token, credProject, err := l.Providers.GoogleToken()
	if err != nil {
		return nil, err
	}
	project := firstOf(m.Project, os.Getenv("GOOGLE_CLOUD_PROJECT"), credProject)
	if project == "" {
		return nil, fmt.Errorf("provider vertex: no project: set model.project, or $GOOGLE_CLOUD_PROJECT (the credentials name none)")
	}
	location := firstOf(m.Location, os.Getenv("GOOGLE_CLOUD_LOCATION"), "global")
	if isClaude(m.Name) {
		return anthropic.NewMessages(anthropic.Config{
			BaseURL: m.BaseURL, Model: m.Name, Token: token, Vertex: &anthropic.Vertex{Project: project, Location: location},
			HTTPClient: oc.HTTPClient, Headers: oc.Headers, MaxRetries: oc.MaxRetries,
			AllowInsecureHTTP: oc.AllowInsecureHTTP, StreamIdleTimeout: oc.StreamIdleTimeout,
		}), nil
	}
	return gemini.New(gemini.Config{
		BaseURL: m.BaseURL, Model: m.Name, Token: token, Vertex: &gemini.Vertex{Project: project, Location: location},
		HTTPClient: oc.HTTPClient, Headers: oc.Headers, MaxRetries: oc.MaxRetries,
		AllowInsecureHTTP: oc.AllowInsecureHTTP, StreamIdleTimeout: oc.StreamIdleTimeout,
	}), nil
}

// newAzure builds Azure OpenAI's Chat Completions (azure) or Responses
// (azure-responses). With api_version, the older versioned URLs
// (openai.AzureBaseURL) from base_url or $AZURE_OPENAI_ENDPOINT; the
// key is api_key or $AZURE_OPENAI_API_KEY, else an Entra ID token from
// ProviderOpeners.EntraToken.
func (l *Loader) newAzure(m Model, oc openai.Config) (runlet.Model, error) {
	cfg := openai.Azure.Config(firstOf(m.Name, m.Deployment))
	cfg.BaseURL, cfg.APIKey = m.BaseURL, m.APIKey
	cfg.HTTPClient, cfg.Headers, cfg.MaxRetries = oc.HTTPClient, oc.Headers, oc.MaxRetries
	cfg.AllowInsecureHTTP, cfg.StreamIdleTimeout = oc.AllowInsecureHTTP, oc.StreamIdleTimeout
	responses := m.Provider == "azure-responses"
	if m.APIVersion != "" {
		endpoint := firstOf(m.BaseURL, os.Getenv("AZURE_OPENAI_ENDPOINT"))
		if endpoint == "" {
			return nil, fmt.Errorf("provider %s: no endpoint: set model.base_url to https://RESOURCE.openai.azure.com, or $AZURE_OPENAI_ENDPOINT", m.Provider)
		}
		deployment := firstOf(m.Deployment, m.Name)
		if responses {
			deployment = "" // Responses names the deployment in the body
		}
		cfg.BaseURL = openai.AzureBaseURL(endpoint, deployment, m.APIVersion)
	}
	if cfg.APIKey == "" && os.Getenv("AZURE_OPENAI_API_KEY") == "" {
		if l.Providers.EntraToken == nil {
			return nil, fmt.Errorf("provider %s: no credentials: model.api_key is empty and $AZURE_OPENAI_API_KEY is unset; for Entra ID instead of a key, %s", m.Provider, cloudCommand)
		}
		token, err := l.Providers.EntraToken()
		if err != nil {
			return nil, err
		}
		cfg.Token = token
	}
	if responses {
		return openai.NewResponses(cfg), nil
	}
	return openai.NewChatCompletions(cfg), nil
}

// isClaude reports whether a Vertex AI model name is Anthropic's.
func isClaude(model string) bool {
	return strings.HasPrefix(model[strings.LastIndex(model, "/")+1:], "claude")
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
