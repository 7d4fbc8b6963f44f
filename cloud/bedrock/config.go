package bedrock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/runlet/runlet/internal/httpc"
)

// Defaults for Config.
const (
	// defaultRegion signs for a BaseURL that names no Region when none is
	// configured (a proxy, a local gateway).
	defaultRegion = "us-east-1"
	// DefaultName labels errors and the continuation state (reasoning
	// signatures) made by this adapter.
	DefaultName = "bedrock"
	// SigningName is the service name in Bedrock's SigV4 signatures.
	SigningName = "bedrock"
	// APIKeyEnv is the environment variable of a Bedrock API key, read
	// when Config.APIKey is empty and Config.Credentials is nil.
	APIKeyEnv = "AWS_BEARER_TOKEN_BEDROCK"
)

// Config is the connection-level configuration of the Bedrock adapter.
// Everything request-level (temperature, reasoning, guardrails, ...) goes
// in runlet.ModelRequest instead.
type Config struct {
	// Model is the modelId sent with every request: a model ID
	// ("anthropic.claude-sonnet-4-5-20250929-v1:0", "amazon.nova-pro-v1:0"),
	// an inference profile ID ("us.anthropic.claude-..."), or an ARN. A
	// request option "model" overrides it.
	Model string
	// Region is the AWS Region of the endpoint and of the signature.
	// Empty means the usual places, in the AWS SDK's order: $AWS_REGION,
	// $AWS_DEFAULT_REGION, then the profile's region in the shared config
	// file; with a BaseURL, else the Region its host names, else
	// us-east-1.
	Region string
	// Profile is the shared config profile to load (credentials and
	// region). Empty means $AWS_PROFILE, else "default".
	Profile string
	// Credentials signs the requests (SigV4). Nil means the AWS SDK's
	// default chain, loaded once by New: environment variables, the
	// shared config and credentials files (profiles, SSO, assume-role,
	// credential processes), web identity, then the container (ECS, EKS
	// Pod Identity) and instance (EC2 IMDS) roles. Credentials are cached
	// and refreshed before they expire.
	Credentials aws.CredentialsProvider `json:"-"`
	// APIKey is a Bedrock API key, sent as "Authorization: Bearer" instead
	// of a SigV4 signature. Empty means $AWS_BEARER_TOKEN_BEDROCK when
	// Credentials is nil; when that is empty too, requests are signed.
	APIKey string
	// BaseURL is the endpoint, everything before "/model/{modelId}/converse".
	// Empty means https://bedrock-runtime.{region}.amazonaws.com (a VPC
	// endpoint or a FIPS endpoint goes here). Requests to it are signed;
	// requests anywhere else (a redirect) are not.
	BaseURL string
	// HTTPClient sends the requests; nil means http.DefaultClient. Its
	// Transport is wrapped to sign each attempt; the client is not changed.
	HTTPClient *http.Client `json:"-"`
	// Headers are added to every request (and signed with it). They are
	// treated as credentials: never in errors or printed values.
	Headers http.Header
	// AllowInsecureHTTP lets signed requests go over plain http:// to a
	// host that is not loopback; without it such a request fails with a
	// *runlet.ProviderError wrapping runlet.ErrInvalidRequest.
	AllowInsecureHTTP bool
	// MaxRetries bounds retries of failed requests (throttling, model not
	// ready, 408, 409, 429, 5xx, connection errors, streams that fail
	// before their first delta). Zero means 2; negative means none.
	MaxRetries int
	// MaxResponseBytes limits the text, reasoning and tool calls one
	// response may accumulate, and the size of one event-stream message;
	// past it the call fails with a *runlet.ProviderError wrapping
	// runlet.ErrResponseTooLarge. Every part and content block counts 512
	// bytes besides its own, every event-stream message 256. Zero means
	// 64 MiB.
	MaxResponseBytes int64
	// StreamIdleTimeout bounds how long a stream may go without a byte
	// from the server; past it the call fails with a retryable
	// *runlet.ProviderError wrapping runlet.ErrStreamIncomplete. Zero
	// means 10 minutes; negative, no bound.
	StreamIdleTimeout time.Duration
	// Name labels errors and the reasoning signatures this adapter
	// produces (the Provider of parts). Empty means "bedrock".
	Name string
	// OnResponse, when set, is called once per successful response with
	// what Bedrock returns beside the message: the guardrail and prompt
	// router trace, additionalModelResponseFields, metrics and the raw
	// stop reason. It runs on the calling goroutine, before Generate
	// returns or the stream's StreamDone is yielded.
	OnResponse func(ctx context.Context, info ResponseInfo) `json:"-"`
}

// resolved is a Config with defaults applied and credentials loaded.
type resolved struct {
	name       string
	base       string
	region     string
	model      string
	limit      int64
	client     *httpc.Client
	signer     *signer
	onResponse func(context.Context, ResponseInfo)
}

// New returns a Bedrock adapter. Unless cfg has Credentials and a Region
// (or an APIKey), it loads the AWS SDK's default configuration once, here:
// ctx bounds that (reading files only; credentials are fetched on the
// first request). The error says which setting is missing.
func New(ctx context.Context, cfg Config) (*Model, error) {
	r, err := cfg.resolve(ctx)
	if err != nil {
		return nil, err
	}
	return &Model{cfg: r}, nil
}

func (c Config) resolve(ctx context.Context) (resolved, error) {
	name := c.Name
	if name == "" {
		name = DefaultName
	}
	key := c.APIKey
	if key == "" && c.Credentials == nil {
		key = os.Getenv(APIKeyEnv)
	}
	region, creds := c.Region, c.Credentials
	if region == "" || (creds == nil && key == "") {
		var opts []func(*config.LoadOptions) error
		if c.Profile != "" {
			opts = append(opts, config.WithSharedConfigProfile(c.Profile))
		}
		if c.Region != "" {
			opts = append(opts, config.WithRegion(c.Region))
		}
		ac, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return resolved{}, fmt.Errorf("bedrock: loading the AWS configuration (environment, shared config files%s): %w", profileNote(c.Profile), err)
		}
		if region == "" {
			region = ac.Region
		}
		if creds == nil {
			creds = ac.Credentials
		}
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if region == "" && base == "" {
		return resolved{}, errors.New("bedrock: no AWS Region: set Config.Region, $AWS_REGION or $AWS_DEFAULT_REGION, or a region in the shared config profile" + profileNote(c.Profile))
	}
	if base == "" {
		base = "https://bedrock-runtime." + region + ".amazonaws.com"
	}
	origin, err := url.Parse(base)
	if err != nil || origin.Host == "" || (origin.Scheme != "https" && origin.Scheme != "http") {
		return resolved{}, fmt.Errorf("bedrock: Config.BaseURL is not an http(s) URL")
	}
	if region == "" {
		region = cmp.Or(regionOf(origin.Host), defaultRegion)
	}
	if key == "" && creds == nil {
		return resolved{}, errors.New("bedrock: no AWS credentials provider")
	}
	h := make(http.Header, len(c.Headers))
	for k, v := range c.Headers {
		h[http.CanonicalHeaderKey(k)] = v
	}
	retries := c.MaxRetries
	switch {
	case retries == 0:
		retries = httpc.DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	s := &signer{
		creds:    creds,
		chain:    c.Credentials == nil,
		apiKey:   key,
		region:   region,
		origin:   origin,
		insecure: c.AllowInsecureHTTP,
		v4:       v4.NewSigner(),
	}
	if key != "" {
		s.creds = nil
	} else if creds != nil {
		if _, cached := creds.(*aws.CredentialsCache); !cached {
			s.creds = aws.NewCredentialsCache(creds)
		}
	}
	client := httpc.NewClient(name, s.client(c.HTTPClient), retries, h, c.Headers, c.AllowInsecureHTTP).WithStreamIdle(c.StreamIdleTimeout)
	client.Policy.SecretHeaders = append(client.Policy.SecretHeaders, "X-Amz-Security-Token")
	client.ErrorHeader = errorHeader
	return resolved{
		name:       name,
		base:       base,
		region:     region,
		model:      c.Model,
		limit:      httpc.NewBudget(name, c.MaxResponseBytes).Limit(),
		client:     client,
		signer:     s,
		onResponse: c.OnResponse,
	}, nil
}

func profileNote(p string) string {
	if p == "" {
		return ""
	}
	return fmt.Sprintf(", profile %q", p)
}

// regionOf reads the Region from a Bedrock endpoint's host name
// (bedrock-runtime.{region}.amazonaws.com, also with -fips or a VPC
// endpoint's prefix); "" when it names none.
func regionOf(host string) string {
	h := strings.Split(strings.ToLower(host), ".")
	for i := 0; i+1 < len(h); i++ {
		if strings.HasPrefix(h[i], "bedrock-runtime") && h[i+1] != "amazonaws" {
			return h[i+1]
		}
	}
	return ""
}

// endpoint is the URL of a model's operation: /model/{modelId}/converse
// or /converse-stream. The model ID is escaped as the AWS SDK escapes a
// URI label (everything but unreserved characters, '/' and ':' included),
// which is also the path the signature covers.
func (r *resolved) endpoint(model string, stream bool) string {
	op := "/converse"
	if stream {
		op = "/converse-stream"
	}
	return r.base + "/model/" + escapeLabel(model) + op
}

func escapeLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
