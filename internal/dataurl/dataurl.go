// Package dataurl parses data: URLs (RFC 2397), the one parser the provider
// adapters share for images and files given inline as URLs.
package dataurl

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// Parse decodes a data: URL into its media type (parameters other than
// ";base64" kept, such as "text/plain;charset=utf-8") and bytes. ok is
// false for anything that is not a well-formed data: URL.
func Parse(u string) (mediaType string, data []byte, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", nil, false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found {
		return "", nil, false
	}
	isBase64 := false
	if m, ok := strings.CutSuffix(meta, ";base64"); ok {
		meta, isBase64 = m, true
	}
	if isBase64 {
		d, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			if d, err = base64.RawStdEncoding.DecodeString(payload); err != nil {
				return "", nil, false
			}
		}
		return meta, d, true
	}
	s, err := url.PathUnescape(payload)
	if err != nil {
		return "", nil, false
	}
	return meta, []byte(s), true
}
