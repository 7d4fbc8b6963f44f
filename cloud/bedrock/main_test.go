package bedrock_test

import (
	"context"
	"testing"
	"time"

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
	cfg.BaseURL = srv.URL
	if cfg.Region == "" {
		cfg.Region = bedrocktest.Region
	}
	if cfg.Credentials == nil && cfg.APIKey == "" {
		cfg.Credentials = srv.Credentials()
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
