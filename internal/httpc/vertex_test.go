package httpc

import (
	"strings"
	"testing"
)

func TestVertexPublisherURL(t *testing.T) {
	cases := []struct {
		base, project, location, publisher string
		want, err                          string
	}{
		{"", "my-proj", "us-central1", "google", "https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/publishers/google", ""},
		{"", "my-proj", "global", "anthropic", "https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/anthropic", ""},
		{"http://127.0.0.1:9/", "p", "europe-west4", "google", "http://127.0.0.1:9/v1/projects/p/locations/europe-west4/publishers/google", ""},
		{"", "example.com:legacy", "us-east5", "anthropic", "https://us-east5-aiplatform.googleapis.com/v1/projects/example.com:legacy/locations/us-east5/publishers/anthropic", ""},
		{"", "p/../x", "us-east5", "anthropic", "https://us-east5-aiplatform.googleapis.com/v1/projects/p%2F..%2Fx/locations/us-east5/publishers/anthropic", ""},
		{"", "", "us-east5", "google", "", "no Vertex AI project"},
		{"", "p", "", "google", "", "no Vertex AI location"},
		{"", "p", "evil.example/x#", "google", "", "not a Vertex AI region name"},
		{"", "p", "US-CENTRAL1", "google", "", "not a Vertex AI region name"},
	}
	for _, c := range cases {
		got, err := VertexPublisherURL(c.base, c.project, c.location, c.publisher)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: err = %v, want %q", c, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: got %q, %v; want %q", c, got, err, c.want)
		}
	}
}
