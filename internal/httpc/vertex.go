package httpc

import (
	"fmt"
	"net/url"
)

// VertexPublisherURL returns the root of a publisher's models on Google
// Vertex AI,
//
//	{root}/v1/projects/{project}/locations/{location}/publishers/{publisher}
//
// to which an adapter appends "/models/{model}:{method}". root is base
// when it is set (a private endpoint, a proxy, a test server), else the
// location's endpoint: https://aiplatform.googleapis.com for "global",
// https://{location}-aiplatform.googleapis.com for a region. The location
// names a host, so it must be a plain region name (letters, digits,
// hyphens); the project is escaped as a path segment.
func VertexPublisherURL(base, project, location, publisher string) (string, error) {
	if project == "" {
		return "", fmt.Errorf("no Vertex AI project: set the project (Config.Vertex.Project; project in a config file; $GOOGLE_CLOUD_PROJECT for the cloud module)")
	}
	if location == "" {
		return "", fmt.Errorf("no Vertex AI location: set the location, a region such as us-central1 or global (Config.Vertex.Location; location in a config file; $GOOGLE_CLOUD_LOCATION for the cloud module)")
	}
	if !regionName(location) {
		return "", fmt.Errorf("location %q is not a Vertex AI region name such as us-central1 or global", location)
	}
	root := base
	switch {
	case root != "":
	case location == "global":
		root = "https://aiplatform.googleapis.com"
	default:
		root = "https://" + location + "-aiplatform.googleapis.com"
	}
	return JoinURL(root, "/v1/projects/"+url.PathEscape(project)+"/locations/"+location+"/publishers/"+publisher), nil
}

// regionName reports whether s is a plain region name: lower-case
// letters, digits and inner hyphens.
func regionName(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
