// Package vertex reaches Google Vertex AI with Google's own credentials:
// Gemini (package providers/gemini) and Claude (package
// providers/anthropic, through rawPredict and streamRawPredict) on a
// regional or the global endpoint, with access tokens from Application
// Default Credentials that refresh before they expire.
//
//	model, err := vertex.Gemini(ctx, gemini.Config{Model: "gemini-2.5-flash"})
//	claude, err := vertex.Anthropic(ctx, anthropic.Config{Model: "claude-sonnet-4-5@20250929",
//		Vertex: &anthropic.Vertex{Location: "us-east5"}})
//
// The wire code is the adapters' own: this package only finds the
// credentials (golang.org/x/oauth2/google) and fills the adapters'
// Config.Vertex and Config.Token, so the main module links no Google
// library. It lives in the nested module github.com/runlet/runlet/cloud.
//
// # Credentials
//
// DefaultCredentials looks where Google's client libraries look, in
// order: the file $GOOGLE_APPLICATION_CREDENTIALS names (a service
// account key, an authorized user, workload identity federation), gcloud's
// file from `gcloud auth application-default login`, then the metadata
// server of Compute Engine, Cloud Run, GKE and App Engine. Its tokens are
// cached and refreshed before they expire, each request asking for the
// current one (Config.Token). When none is found, or a token cannot be
// had, the error says which source was tried. Tokens are credentials
// like API keys: never in errors, dropped on a redirect to another host,
// never over plain HTTP off loopback.
//
// # Project and location
//
// An empty project is $GOOGLE_CLOUD_PROJECT, else the credentials' own
// (a service account's project_id; the metadata server's project); an
// empty location is $GOOGLE_CLOUD_LOCATION, else "global". "global" is
// served by https://aiplatform.googleapis.com, a region by
// https://{region}-aiplatform.googleapis.com; Config.BaseURL replaces
// either (a private endpoint, a test server).
package vertex
