package bedrock_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/modelkit/modeltest"
	"github.com/runlet/runlet/runlettest"
)

// TestModelContract runs the Model conformance suite against the fake
// Bedrock, which recomputes every request's SigV4 signature: the suite's
// key is the secret access key, so a wrong key is a wrong signature, and
// no error may show the secret.
func TestModelContract(t *testing.T) {
	wire := func() runlettest.WireServer { return bedrocktest.NewServer() }
	modeltest.Run(t, wire, func(t *testing.T, s modeltest.Server) runlet.Model {
		m, err := bedrock.New(context.Background(), bedrock.Config{
			BaseURL: s.BaseURL, Region: bedrocktest.Region, Model: testModel,
			Credentials: credentials.NewStaticCredentialsProvider(bedrocktest.AccessKeyID, s.APIKey, ""),
			HTTPClient:  s.HTTPClient, MaxResponseBytes: s.MaxResponseBytes, MaxRetries: -1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}
