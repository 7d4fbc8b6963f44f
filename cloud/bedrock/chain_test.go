package bedrock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

// isolate points the AWS SDK's configuration at nothing of the machine's:
// no files, no instance metadata, no variables but those the test sets.
func isolate(t *testing.T) string {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_BEARER_TOKEN_BEDROCK", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return dir
}

// With no Credentials and no Region in Config, New loads the AWS SDK's
// default chain: credentials and Region from the environment, or from a
// profile of the shared files; the fake verifies that the request was
// signed with them.
func TestDefaultCredentialChain(t *testing.T) {
	t.Run("environment", func(t *testing.T) {
		isolate(t)
		t.Setenv("AWS_ACCESS_KEY_ID", bedrocktest.AccessKeyID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", bedrocktest.SecretAccessKey)
		t.Setenv("AWS_REGION", "eu-central-1")
		srv := bedrocktest.NewServer(runlettest.WireReply{Text: "ok"})
		defer srv.Close()
		m, err := bedrock.New(context.Background(), bedrock.Config{BaseURL: srv.URL, Model: testModel, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Generate(ctx(t), hello()); err != nil {
			t.Fatal(err)
		}
		if auth := srv.Requests()[0].Header.Get("Authorization"); !strings.Contains(auth, "/eu-central-1/bedrock/") {
			t.Errorf("Authorization %q, want the Region from $AWS_REGION", auth)
		}
	})
	t.Run("profile", func(t *testing.T) {
		dir := isolate(t)
		creds := "[dev]\naws_access_key_id = " + bedrocktest.AccessKeyID + "\naws_secret_access_key = " + bedrocktest.SecretAccessKey + "\n"
		if err := os.WriteFile(filepath.Join(dir, "credentials"), []byte(creds), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config"), []byte("[profile dev]\nregion = ap-northeast-1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		srv := bedrocktest.NewServer(runlettest.WireReply{Text: "ok"})
		defer srv.Close()
		m, err := bedrock.New(context.Background(), bedrock.Config{BaseURL: srv.URL, Model: testModel, Profile: "dev", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if m.Region() != "ap-northeast-1" {
			t.Errorf("Region %q, want the profile's", m.Region())
		}
		if _, err := m.Generate(ctx(t), hello()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("API key from the environment", func(t *testing.T) {
		isolate(t)
		const key = "ABSK-env-key-0123456789abcdef"
		t.Setenv("AWS_BEARER_TOKEN_BEDROCK", key)
		srv := bedrocktest.NewServer(runlettest.WireReply{Text: "ok"})
		defer srv.Close()
		srv.RequireBearer(key)
		m, err := bedrock.New(context.Background(), bedrock.Config{BaseURL: srv.URL, Region: "us-east-1", Model: testModel, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Generate(ctx(t), hello()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no Region", func(t *testing.T) {
		isolate(t)
		_, err := bedrock.New(context.Background(), bedrock.Config{Model: testModel})
		if err == nil || !strings.Contains(err.Error(), "no AWS Region") || !strings.Contains(err.Error(), "AWS_REGION") {
			t.Errorf("error %v, want one naming where a Region comes from", err)
		}
	})
	t.Run("unknown profile", func(t *testing.T) {
		isolate(t)
		_, err := bedrock.New(context.Background(), bedrock.Config{Model: testModel, Profile: "nope"})
		if err == nil || !strings.Contains(err.Error(), `profile "nope"`) {
			t.Errorf("error %v, want one naming the profile", err)
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		isolate(t)
		srv := bedrocktest.NewServer()
		defer srv.Close()
		m, err := bedrock.New(context.Background(), bedrock.Config{BaseURL: srv.URL, Region: "us-east-1", Model: testModel, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Generate(ctx(t), hello())
		var cerr *bedrock.CredentialError
		if !errors.As(err, &cerr) || !cerr.DefaultChain || !strings.Contains(err.Error(), "default chain tried") || len(srv.Requests()) != 0 {
			t.Errorf("error %v after %d requests, want a credential error and nothing sent", err, len(srv.Requests()))
		}
		if testing.Verbose() {
			t.Log(err)
		}
	})
}

// A BaseURL without a Region anywhere signs for the Region its host names
// (bedrock-runtime.{region}.amazonaws.com, a VPC endpoint's), else
// us-east-1.
func TestRegionFromBaseURL(t *testing.T) {
	isolate(t)
	for url, want := range map[string]string{
		"https://bedrock-runtime.eu-west-3.amazonaws.com":                 "eu-west-3",
		"https://vpce-0a1b.bedrock-runtime.ap-south-1.vpce.amazonaws.com": "ap-south-1",
		"https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com":        "us-gov-west-1",
		"http://127.0.0.1:8080/proxy":                                     "us-east-1",
	} {
		m, err := bedrock.New(context.Background(), bedrock.Config{BaseURL: url, Model: testModel, APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if m.Region() != want {
			t.Errorf("%s: Region %q, want %q", url, m.Region(), want)
		}
	}
}
