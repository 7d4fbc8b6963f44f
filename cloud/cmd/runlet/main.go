// Command runlet is the runlet command (see
// github.com/runlet/runlet/cmd/runlet) with the clouds' credentials
// linked in: --provider bedrock (Amazon Bedrock, the AWS SDK's credential
// chain), --provider vertex (Gemini, or Claude for a claude-* model, on
// Vertex AI, with Application Default Credentials) and --provider azure
// or azure-responses without an API key (Entra ID from
// DefaultAzureCredential), from flags or a config file.
//
//	go run github.com/runlet/runlet/cloud/cmd/runlet run --provider vertex "Hello"
//	go run github.com/runlet/runlet/cloud/cmd/runlet run --provider bedrock \
//		--model us.anthropic.claude-sonnet-4-5-20250929-v1:0 "Hello"
//
// The region, project and location come from --region, --project,
// --location (and Azure's --deployment, --api-version), else --config
// (region, project, location, deployment, api_version in the model
// section), else the cloud's usual variables (AWS_REGION,
// GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION).
package main

import (
	"os"

	"github.com/runlet/runlet/cloud/cloudconfig"
	"github.com/runlet/runlet/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Extensions{Providers: cloudconfig.Openers()}))
}
