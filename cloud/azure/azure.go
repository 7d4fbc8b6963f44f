// Package azure reaches Azure OpenAI with Entra ID (Azure AD) tokens from
// the Azure identity library's credential chain, through the OpenAI
// adapters (package providers/openai: Chat Completions and Responses, on
// the v1 API or the older versioned URLs; see openai.AzureBaseURL).
//
//	cfg := openai.Azure.Config("my-gpt-4o-deployment")
//	cfg.BaseURL = "https://my-resource.openai.azure.com"
//	model, err := azure.NewChatCompletions(cfg) // or azure.NewResponses
//
// Only the token comes from here: the wire code is the adapters', so the
// main module links no Azure library. It lives in the nested module
// github.com/runlet/runlet/cloud. With an API key instead
// ($AZURE_OPENAI_API_KEY, the api-key header) the main module's Azure
// preset needs nothing from this package.
//
// # Credentials
//
// DefaultToken uses azidentity's DefaultAzureCredential, which tries, in
// order: the environment (AZURE_TENANT_ID, AZURE_CLIENT_ID with
// AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH), workload identity
// (AKS), a managed identity, then the Azure CLI, the Azure Developer CLI
// and Azure PowerShell sign-ins. Its error lists what each source said.
// Token wraps any other azcore.TokenCredential. A token is asked for
// openai.AzureScope, cached, and refreshed five minutes before it
// expires; it goes as "Authorization: Bearer" with no api-key, and like a
// key it never appears in an error, never follows a redirect to another
// host and never travels over plain HTTP off loopback.
package azure

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/runlet/runlet/providers/openai"
)

// refreshMargin is how long before its expiry a token is replaced.
const refreshMargin = 5 * time.Minute

// Token returns the adapters' Config.Token for cred: tokens for
// openai.AzureScope, cached until refreshMargin before they expire.
// source names cred in errors, such as "DefaultAzureCredential".
func Token(cred azcore.TokenCredential, source string) func(ctx context.Context) (string, error) {
	c := &cache{cred: cred, source: source, now: time.Now}
	return c.token
}

// DefaultToken returns Token of azidentity's DefaultAzureCredential (see
// the package doc), or the error that says why it cannot be built.
func DefaultToken() (func(ctx context.Context) (string, error), error) {
	const source = "DefaultAzureCredential (environment, workload identity, managed identity, Azure CLI, Azure Developer CLI, Azure PowerShell)"
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("azure: %s: %w", source, err)
	}
	return Token(cred, source), nil
}

// cache keeps one token until it is about to expire.
type cache struct {
	cred   azcore.TokenCredential
	source string
	now    func() time.Time

	mu  sync.Mutex
	tok azcore.AccessToken
}

func (c *cache) token(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok.Token != "" && c.now().Add(refreshMargin).Before(c.tok.ExpiresOn) {
		return c.tok.Token, nil
	}
	tok, err := c.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{openai.AzureScope}})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("azure: Entra ID token from %s: %w", c.source, err)
	}
	c.tok = tok
	return tok.Token, nil
}

// entra returns cfg with the Azure preset's defaults and a token from
// DefaultToken when it has neither a Token nor an APIKey.
func entra(cfg openai.Config) (openai.Config, error) {
	if cfg.Name == "" {
		cfg.Name = openai.Azure.Name
	}
	if cfg.Token == nil && cfg.APIKey == "" {
		tok, err := DefaultToken()
		if err != nil {
			return cfg, err
		}
		cfg.Token = tok
	}
	return cfg, nil
}

// NewChatCompletions returns a Chat Completions adapter for Azure OpenAI
// with an Entra ID token from DefaultToken, unless cfg already has a
// Token or an APIKey. Start cfg from openai.Azure.Config(deployment).
func NewChatCompletions(cfg openai.Config) (*openai.ChatCompletions, error) {
	cfg, err := entra(cfg)
	if err != nil {
		return nil, err
	}
	return openai.NewChatCompletions(cfg), nil
}

// NewResponses returns a Responses adapter for Azure OpenAI with an Entra
// ID token from DefaultToken, unless cfg already has a Token or an
// APIKey. Start cfg from openai.Azure.Config(deployment).
func NewResponses(cfg openai.Config) (*openai.Responses, error) {
	cfg, err := entra(cfg)
	if err != nil {
		return nil, err
	}
	return openai.NewResponses(cfg), nil
}
