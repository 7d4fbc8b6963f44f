package httpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// unwrapArray returns the first element of a JSON array body (Google's
// streaming endpoints wrap their error envelope in one), else body.
func unwrapArray(body []byte) []byte {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '[' {
		return body
	}
	var arr []json.RawMessage
	if json.Unmarshal(t, &arr) != nil || len(arr) == 0 {
		return body
	}
	return arr[0]
}

// googleRetryable reports whether a google.rpc.Code name is worth
// retrying (for errors inside a stream, which have no HTTP status).
func googleRetryable(status string) bool {
	switch status {
	case "RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "ABORTED":
		return true
	}
	return false
}

// googleRetryDelay reads the retryDelay of a google.rpc.RetryInfo detail,
// a protobuf Duration in JSON ("34.4s"); zero when there is none.
func googleRetryDelay(details []json.RawMessage) time.Duration {
	for _, raw := range details {
		var d struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
		}
		if json.Unmarshal(raw, &d) != nil || !strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			continue
		}
		if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
			return v
		}
	}
	return 0
}
