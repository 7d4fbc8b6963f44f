package cli

import (
	"slices"
	"strings"

	"github.com/runlet/runlet/config"
)

// cloudCommand is how to run the build of this command that reaches the
// clouds, for messages: in a clone of the repository from its cloud
// directory (the cloud module is a module of its own, so `go run` of its
// import path from the main module finds no such package), else installed.
const cloudCommand = "cd cloud && go run ./cmd/runlet (in a clone of the repository), or go install github.com/runlet/runlet/cloud/cmd/runlet@latest"

// cloudProviders are the providers only the cloud build reaches.
var cloudProviders = []string{"bedrock", "vertex"}

// knownProviders lists the providers --provider takes in this build.
func (a *app) knownProviders() []string {
	known := config.Providers()
	for _, p := range cloudProviders {
		if a.reaches(p) {
			known = append(known, p)
		}
	}
	slices.Sort(known)
	return known
}

// reaches reports whether this build has the credentials of cloud
// provider p.
func (a *app) reaches(p string) bool {
	switch p {
	case "bedrock":
		return a.ext.Providers.Bedrock != nil
	case "vertex":
		return a.ext.Providers.GoogleToken != nil
	}
	return false
}

// checkCloud says which command to use for a cloud this build cannot
// reach; nil for any other provider.
func (a *app) checkCloud(p string) error {
	if !slices.Contains(cloudProviders, p) || a.reaches(p) {
		return nil
	}
	what := map[string]string{"bedrock": "Amazon Bedrock (the AWS SDK's credentials)", "vertex": "Vertex AI (Google's Application Default Credentials)"}[p]
	return usagef("provider %s: this runlet does not link %s; use the cloud build: %s", p, what, cloudCommand)
}

// checkAzure fails early, with the fix, when Azure OpenAI has neither an
// endpoint nor credentials: a key, or Entra ID in the cloud build.
func (a *app) checkAzure(m config.Model) error {
	if m.BaseURL == "" && a.getenv("AZURE_OPENAI_ENDPOINT") == "" {
		return usagef("provider %s has no base URL: export AZURE_OPENAI_ENDPOINT=https://RESOURCE.openai.azure.com, or pass --base-url (base_url in the config), such as https://RESOURCE.openai.azure.com/openai/v1 or a deployment's URL with its ?api-version=",
			m.Provider)
	}
	if m.APIKey != "" || a.getenv("AZURE_OPENAI_API_KEY") != "" || a.ext.Providers.EntraToken != nil {
		return nil
	}
	return usagef("AZURE_OPENAI_API_KEY is not set: export AZURE_OPENAI_API_KEY=... (the resource's key), or, for Entra ID instead of a key, use the cloud build: %s", cloudCommand)
}

// cloudFlags are the model section's cloud keys, from the command line.
type cloudFlags struct {
	region, project, location, deployment, apiVersion string
}

// apply sets m's cloud keys from the flags given, over the config's, and
// refuses a flag that is not for m's provider.
func (c cloudFlags) apply(m *config.Model) error {
	for _, k := range []struct {
		flag, value string
		dst         *string
		owners      []string
	}{
		{"--region", c.region, &m.Region, []string{"bedrock"}},
		{"--project", c.project, &m.Project, []string{"vertex"}},
		{"--location", c.location, &m.Location, []string{"vertex"}},
		{"--deployment", c.deployment, &m.Deployment, []string{"azure", "azure-responses"}},
		{"--api-version", c.apiVersion, &m.APIVersion, []string{"azure", "azure-responses"}},
	} {
		if k.value == "" {
			continue
		}
		if !slices.Contains(k.owners, m.Provider) {
			return usagef("%s is only for --provider %s", k.flag, strings.Join(k.owners, " or "))
		}
		*k.dst = k.value
	}
	return nil
}
