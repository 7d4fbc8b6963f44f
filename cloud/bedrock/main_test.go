package bedrock_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"go.uber.org/goleak"

	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testModel is the model ID the tests use: an ARN-like ID with ':' and
// '/', which the path and the signature must escape alike.
const testModel = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// newModel returns an adapter for srv signed with the server's test
// credentials, with fast retries.
func newModel(t *testing.T, srv *bedrocktest.Server, cfg bedrock.Config) *bedrock.Model {
	t.Helper()
	if cfg.Credentials == nil && cfg.APIKey == "" {
		cfg.Credentials = srv.Credentials()
	}
	return newModelAt(t, srv.URL, cfg)
}

// newModelAt returns an adapter for the endpoint at url, signed with the
// fake's default test credentials unless cfg has others, with fast
// retries.
func newModelAt(t *testing.T, url string, cfg bedrock.Config) *bedrock.Model {
	t.Helper()
	cfg.BaseURL = url
	if cfg.Region == "" {
		cfg.Region = bedrocktest.Region
	}
	if cfg.Credentials == nil && cfg.APIKey == "" {
		cfg.Credentials = credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, bedrocktest.SecretAccessKey, "")
	}
	if cfg.Model == "" {
		cfg.Model = testModel
	}
	m, err := bedrock.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	bedrock.FastRetries(m)
	return m
}

// ctx is a context bounded by a generous hang guard.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
