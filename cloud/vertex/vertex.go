package vertex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
)

// Scope is the OAuth scope of the tokens Vertex AI takes.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// DefaultLocation is the location used when neither the configuration
// nor $GOOGLE_CLOUD_LOCATION names one.
const DefaultLocation = "global"

// Credentials are Google credentials made ready for the adapters.
type Credentials struct {
	// Token gives the current access token (the adapters' Config.Token),
	// refreshing it before it expires.
	Token func(ctx context.Context) (string, error)
	// Project is the project the credentials name, if any.
	Project string
	// Source says where the credentials were found, for messages, such
	// as "$GOOGLE_APPLICATION_CREDENTIALS (/etc/sa.json)".
	Source string
}

// DefaultCredentials finds Application Default Credentials (see the
// package doc) for Scope. ctx's values (an oauth2.HTTPClient) serve every
// later token refresh; its cancellation does not. An error says which
// sources were tried.
func DefaultCredentials(ctx context.Context) (*Credentials, error) {
	ctx = context.WithoutCancel(ctx)
	source := adcSource()
	creds, err := google.FindDefaultCredentials(ctx, Scope)
	if err != nil {
		if source == metadataSource {
			return nil, fmt.Errorf("vertex: no Application Default Credentials: $GOOGLE_APPLICATION_CREDENTIALS is unset, gcloud's file %s does not exist, and no metadata server answered (not on Google Cloud); run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS: %w", wellKnownFile(), err)
		}
		return nil, fmt.Errorf("vertex: Application Default Credentials from %s: %w", source, err)
	}
	return FromTokenSource(creds.TokenSource, creds.ProjectID, source), nil
}

// FromTokenSource makes Credentials of any token source (a service
// account's from google.CredentialsFromJSON, an impersonated one, ...),
// for project, found at source (for messages). Tokens are cached until
// they expire (oauth2.ReuseTokenSource).
func FromTokenSource(ts oauth2.TokenSource, project, source string) *Credentials {
	ts = oauth2.ReuseTokenSource(nil, ts)
	return &Credentials{Project: project, Source: source, Token: func(ctx context.Context) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		t, err := ts.Token()
		if err != nil {
			return "", fmt.Errorf("vertex: access token from %s: %w", source, err)
		}
		return t.AccessToken, nil
	}}
}

const metadataSource = "the metadata server"

// adcSource names where FindDefaultCredentials will look first.
func adcSource() string {
	if f := os.Getenv("GOOGLE_APPLICATION_CREDENTIALS"); f != "" {
		return "$GOOGLE_APPLICATION_CREDENTIALS (" + f + ")"
	}
	if f := wellKnownFile(); f != "" {
		if _, err := os.Stat(f); err == nil {
			return "gcloud's application default credentials (" + f + ")"
		}
	}
	return metadataSource
}

// wellKnownFile is where gcloud writes application default credentials.
func wellKnownFile() string {
	const name = "application_default_credentials.json"
	if runtime.GOOS == "windows" {
		return filepath.Join(os.Getenv("APPDATA"), "gcloud", name)
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".config", "gcloud", name)
}

// resolve fills an empty project and location, and a nil token source,
// from creds (nil: DefaultCredentials) and the environment.
func resolve(ctx context.Context, project, location *string, token *func(context.Context) (string, error)) error {
	var creds *Credentials
	if *token == nil {
		var err error
		if creds, err = DefaultCredentials(ctx); err != nil {
			return err
		}
		*token = creds.Token
	}
	if *project == "" {
		*project = os.Getenv("GOOGLE_CLOUD_PROJECT")
	}
	if *project == "" && creds != nil {
		*project = creds.Project
	}
	if *project == "" {
		return errors.New("vertex: no project: set it in the configuration (Vertex.Project, project: in a config file) or $GOOGLE_CLOUD_PROJECT")
	}
	if *location == "" {
		*location = os.Getenv("GOOGLE_CLOUD_LOCATION")
	}
	if *location == "" {
		*location = DefaultLocation
	}
	return nil
}

// Gemini returns a Gemini adapter on Vertex AI. A nil cfg.Vertex, or its
// empty Project and Location, are filled as the package doc says; a nil
// cfg.Token comes from DefaultCredentials. Everything else in cfg is the
// adapter's.
func Gemini(ctx context.Context, cfg gemini.Config) (*gemini.Model, error) {
	v := gemini.Vertex{}
	if cfg.Vertex != nil {
		v = *cfg.Vertex
	}
	if err := resolve(ctx, &v.Project, &v.Location, &cfg.Token); err != nil {
		return nil, err
	}
	cfg.Vertex = &v
	return gemini.New(cfg), nil
}

// Anthropic returns a Claude adapter on Vertex AI (rawPredict and
// streamRawPredict). A nil cfg.Vertex, or its empty Project and Location,
// are filled as the package doc says; a nil cfg.Token comes from
// DefaultCredentials. Everything else in cfg is the adapter's.
func Anthropic(ctx context.Context, cfg anthropic.Config) (*anthropic.Messages, error) {
	v := anthropic.Vertex{}
	if cfg.Vertex != nil {
		v = *cfg.Vertex
	}
	if err := resolve(ctx, &v.Project, &v.Location, &cfg.Token); err != nil {
		return nil, err
	}
	cfg.Vertex = &v
	return anthropic.NewMessages(cfg), nil
}

// IsClaude reports whether a Vertex AI model name is one of Anthropic's
// (served by the Anthropic adapter), rather than Gemini.
func IsClaude(model string) bool {
	model = model[strings.LastIndex(model, "/")+1:] // publishers/anthropic/models/claude-...
	return strings.HasPrefix(model, "claude")
}
