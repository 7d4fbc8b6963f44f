package bedrock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/safehttp"
)

// signer authenticates the requests to one endpoint: a SigV4 signature
// made by the AWS SDK's signer with credentials from the provider (or a
// Bedrock API key as a bearer token). It signs in the transport, so each
// attempt of a retried request is signed afresh, and only requests to the
// configured origin: a redirect elsewhere goes unsigned.
type signer struct {
	creds    aws.CredentialsProvider // nil with an API key
	chain    bool                    // creds is the SDK's default chain
	apiKey   string
	region   string
	origin   *url.URL
	insecure bool       // AllowInsecureHTTP
	v4       *v4.Signer // v4.NewSigner(): the zero Signer cannot sign

	mu      sync.Mutex
	secrets []string // of the credentials used so far, for Redact
}

// CredentialError is the error of a request that could not be signed
// because the credential chain found no usable credentials. It wraps the
// AWS SDK's error, which names the sources it tried.
type CredentialError struct {
	// DefaultChain is set when the credentials came from the AWS SDK's
	// default chain rather than Config.Credentials.
	DefaultChain bool
	// Err is the credential provider's error, which names what it tried.
	Err error
}

// Error says where the credentials were looked for, and why they failed.
func (e *CredentialError) Error() string {
	if e.DefaultChain {
		return "no usable AWS credentials: the AWS SDK's default chain tried the environment (AWS_ACCESS_KEY_ID), the shared config and credentials files (profile, SSO, assume-role, credential process), web identity, and the container and instance roles: " + e.Err.Error()
	}
	return "no usable AWS credentials from Config.Credentials: " + e.Err.Error()
}

// Unwrap returns Err.
func (e *CredentialError) Unwrap() error { return e.Err }

// Retryable tells httpc that a missing credential is final: no connection
// was tried, and a retry finds the same files and environment.
func (e *CredentialError) Retryable() bool { return false }

// client returns a copy of hc whose transport signs.
func (s *signer) client(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &signingTransport{s: s, base: base}
	return c
}

type signingTransport struct {
	s    *signer
	base http.RoundTripper
}

// RoundTrip signs req when it goes to the signer's origin, then sends it.
func (t *signingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if safehttp.OriginOf(req.URL) != safehttp.OriginOf(t.s.origin) {
		return t.base.RoundTrip(req)
	}
	if !t.s.insecure && safehttp.Insecure(req.URL) {
		closeBody(req)
		return nil, &safehttp.InsecureError{URL: safehttp.RedactURL(req.URL), OptOut: httpc.OptOut}
	}
	signed, err := t.s.sign(req.Context(), req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	return t.base.RoundTrip(signed)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// sign returns a signed copy of req (a RoundTripper must not change the
// request it was given).
func (s *signer) sign(ctx context.Context, req *http.Request) (*http.Request, error) {
	out := req.Clone(ctx)
	if s.creds == nil {
		out.Header.Set("Authorization", "Bearer "+s.apiKey)
		s.remember(s.apiKey)
		return out, nil
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &CredentialError{DefaultChain: s.chain, Err: err}
	}
	s.remember(creds.SecretAccessKey, creds.SessionToken)
	sum := sha256.Sum256(body)
	if err := s.v4.SignHTTP(ctx, creds, out, hex.EncodeToString(sum[:]), SigningName, s.region, time.Now()); err != nil {
		return nil, fmt.Errorf("signing the request: %w", err)
	}
	return out, nil
}

// readBody reads the request's body (a fresh copy from GetBody when it
// has one, so req itself is left as it was).
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// remember notes secrets that went into a request, so errors can be
// redacted of them (a server may echo a session token).
func (s *signer) remember(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		if v == "" || slices.Contains(s.secrets, v) {
			continue
		}
		s.secrets = append(s.secrets, v)
		if len(s.secrets) > 8 { // rotated credentials: keep the recent ones
			s.secrets = s.secrets[1:]
		}
	}
}

// redact removes every credential the signer used from err.
func (s *signer) redact(err error) error {
	if err == nil {
		return nil
	}
	s.mu.Lock()
	secrets := append([]string(nil), s.secrets...)
	s.mu.Unlock()
	if len(secrets) == 0 {
		return err
	}
	return httpc.Redact(err, secrets...)
}
