package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

func hello() *runlet.ModelRequest {
	return &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("Hello")}}
}

// The fake recomputes each request's signature: a request signed with
// the right credentials (and a model ID with ':' and '/', which the path
// and the canonical URI escape alike) is answered; one signed with
// another secret, or whose body was changed after signing, is refused as
// Bedrock refuses it, and the error shows no secret.
func TestSigV4VerifiedByServer(t *testing.T) {
	srv := bedrocktest.NewServer()
	defer srv.Close()
	arn := "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	srv.EnqueueReplies(runlettest.WireReply{Text: "Hi!"})
	m := newModel(t, srv, bedrock.Config{Model: arn})
	resp, err := m.Generate(ctx(t), hello())
	if err != nil {
		t.Fatalf("signed request: %v", err)
	}
	if resp.Message.Text() != "Hi!" {
		t.Errorf("text %q", resp.Message.Text())
	}
	req := srv.Requests()[0]
	if want := "/model/" + arn + "/converse"; req.Path != want {
		t.Errorf("path %q, want %q", req.Path, want)
	}
	if auth := req.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+bedrocktest.AccessKeyID+"/") || !strings.Contains(auth, "/us-east-1/bedrock/aws4_request") {
		t.Errorf("Authorization %q", auth)
	}

	const wrongSecret = "wrong-secret-key-0123456789abcdef"
	wrong := newModel(t, srv, bedrock.Config{Credentials: credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, wrongSecret, "")})
	_, err = wrong.Generate(ctx(t), hello())
	var perr *runlet.ProviderError
	if !errors.As(err, &perr) || perr.StatusCode != http.StatusForbidden || perr.Code != "InvalidSignatureException" || perr.Retryable {
		t.Fatalf("wrong secret: %#v, want a final 403 InvalidSignatureException", err)
	}
	if strings.Contains(fmt.Sprintf("%v %+v", err, *perr), wrongSecret) {
		t.Errorf("the error shows the secret: %v", err)
	}
}

// VerifySigV4 refuses a body changed after signing, a signature for
// another Region, and a stale date.
func TestVerifySigV4Refuses(t *testing.T) {
	var got []error
	check := func(r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		body := buf.Bytes()
		got = append(got,
			bedrocktest.VerifySigV4(r, body, bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "bedrock", bedrocktest.Region, time.Now()),
			bedrocktest.VerifySigV4(r, append(body, ' '), bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "bedrock", bedrocktest.Region, time.Now()),
			bedrocktest.VerifySigV4(r, body, bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "bedrock", "eu-west-1", time.Now()),
			bedrocktest.VerifySigV4(r, body, bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "bedrock", bedrocktest.Region, time.Now().Add(time.Hour)),
		)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		check(r)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	m, err := bedrock.New(context.Background(), bedrock.Config{BaseURL: srv.URL, Region: bedrocktest.Region, Model: testModel, MaxRetries: -1,
		Credentials: credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = m.Generate(ctx(t), hello())
	if len(got) != 4 {
		t.Fatalf("%d checks", len(got))
	}
	if got[0] != nil {
		t.Errorf("valid request refused: %v", got[0])
	}
	for i, what := range []string{"changed body", "other Region", "stale date"} {
		if got[i+1] == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}

// Temporary credentials: the session token is sent (and signed) as
// X-Amz-Security-Token, and a server that echoes it back gets it masked
// in the error.
func TestSessionTokenSignedAndRedacted(t *testing.T) {
	srv := bedrocktest.NewServer()
	defer srv.Close()
	const token = "FwoGZXIvYXdzEJr-session-token-secret-0123456789"
	m := newModel(t, srv, bedrock.Config{Credentials: credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, token), MaxRetries: -1})
	srv.EnqueueReplies(runlettest.WireReply{Text: "ok"})
	if _, err := m.Generate(ctx(t), hello()); err != nil {
		t.Fatalf("with a session token: %v", err)
	}
	if got := srv.Requests()[0].Header.Get("X-Amz-Security-Token"); got != token {
		t.Errorf("X-Amz-Security-Token %q", got)
	}
	srv.InjectFault(runlettest.Fault{Status: 400, Header: http.Header{"X-Amzn-Errortype": {"ValidationException"}}, Body: `{"message":"bad token ` + token + `"}`})
	_, err := m.Generate(ctx(t), hello())
	if err == nil || strings.Contains(err.Error(), token) || strings.Contains(err.Error(), token[10:30]) {
		t.Errorf("error %v shows the session token", err)
	}
}

// A Bedrock API key is a bearer token instead of a signature.
func TestAPIKeyBearer(t *testing.T) {
	srv := bedrocktest.NewServer(runlettest.WireReply{Text: "ok"})
	defer srv.Close()
	const key = "ABSKQmVkcm9ja0FQSUtleS1test-key-0123456789"
	srv.RequireBearer(key)
	m := newModel(t, srv, bedrock.Config{APIKey: key})
	if _, err := m.Generate(ctx(t), hello()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("Authorization %q", got)
	}
	bad := newModel(t, srv, bedrock.Config{APIKey: key + "x", MaxRetries: -1})
	_, err := bad.Generate(ctx(t), hello())
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("wrong key: %v", err)
	}
}

// A credential provider that fails: the request is not sent, and the
// error says no credentials were found, wrapping the provider's error.
func TestCredentialChainFailure(t *testing.T) {
	srv := bedrocktest.NewServer()
	defer srv.Close()
	fail := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New("failed to refresh cached credentials, no EC2 IMDS role found")
	})
	m := newModel(t, srv, bedrock.Config{Credentials: fail})
	_, err := m.Generate(ctx(t), hello())
	var cerr *bedrock.CredentialError
	if !errors.As(err, &cerr) || cerr.DefaultChain || !strings.Contains(err.Error(), "Config.Credentials") || !strings.Contains(err.Error(), "no EC2 IMDS role found") {
		t.Fatalf("error %v, want a *bedrock.CredentialError naming the provider's failure", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent without credentials", n)
	}
}

// Signing happens only for the configured endpoint, over TLS or to
// loopback: a plain-HTTP endpoint elsewhere is refused unless allowed,
// and a redirect to another host carries no signature or token.
func TestSigningStaysWithEndpoint(t *testing.T) {
	m, err := bedrock.New(context.Background(), bedrock.Config{BaseURL: "http://bedrock.example.com", Region: "us-east-1", Model: testModel,
		Credentials: credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "tok-0123456789"), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(ctx(t), hello())
	if !errors.Is(err, runlet.ErrInvalidRequest) || !strings.Contains(err.Error(), "plain HTTP") {
		t.Errorf("plain HTTP off loopback: %v", err)
	}

	var seen http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		w.WriteHeader(http.StatusTeapot)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	m, err = bedrock.New(context.Background(), bedrock.Config{BaseURL: redirect.URL, Region: "us-east-1", Model: testModel, MaxRetries: -1,
		Credentials: credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "tok-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = m.Generate(ctx(t), hello())
	if seen == nil {
		t.Fatal("the redirect was not followed")
	}
	if seen.Get("Authorization") != "" || seen.Get("X-Amz-Security-Token") != "" {
		t.Errorf("the redirected request carries credentials: %v", seen)
	}
}

// Printing a Config or a Model never shows a credential.
func TestPrintingHidesCredentials(t *testing.T) {
	cfg := bedrock.Config{Model: testModel, Region: "us-east-1", APIKey: "ABSK-api-key-secret-0123456789",
		Credentials: credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "session-token-secret-0123"),
		Headers:     http.Header{"X-Custom": {"header-secret-0123456789"}}}
	m, err := bedrock.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range []any{cfg, &cfg, m} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		j, _ := json.Marshal(v)
		out = append(out, string(j))
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "v", v)
		out = append(out, buf.String())
	}
	for _, s := range out {
		for _, secret := range []string{bedrocktest.SecretAccessKey, "session-token-secret", "ABSK-api-key-secret", "header-secret"} {
			if strings.Contains(s, secret) {
				t.Errorf("printed %q shows %q", s, secret)
			}
		}
	}
}

// One Model serves concurrent calls, each signed (and its credentials
// noted for redaction) on its own: run with -race.
func TestConcurrentCalls(t *testing.T) {
	srv := bedrocktest.NewServer()
	defer srv.Close()
	srv.SetReplyResponder(func(runlettest.WireRequest) runlettest.WireReply { return runlettest.WireReply{Text: "ok"} })
	m := newModel(t, srv, bedrock.Config{Credentials: credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "token-0123456789")})
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			if i%2 == 0 {
				_, err := m.Generate(ctx(t), hello())
				errs <- err
				return
			}
			var err error
			for _, e := range m.Stream(ctx(t), hello()) {
				if e != nil {
					err = e
				}
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := len(srv.Requests()); n != 16 {
		t.Errorf("%d requests", n)
	}
}
