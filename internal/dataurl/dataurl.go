// Package dataurl encodes and parses data: URLs (RFC 2397), the one copy
// every adapter uses for inline images, audio and documents.
package dataurl

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
)

// Is reports whether u is a data: URL (the scheme is case-insensitive).
func Is(u string) bool {
	return len(u) >= 5 && strings.EqualFold(u[:5], "data:")
}

// Encode returns data as a base64 data: URL. An empty mediaType is sniffed
// from the data (http.DetectContentType, without parameters).
func Encode(mediaType string, data []byte) string {
	if mediaType == "" {
		mediaType = MediaType(http.DetectContentType(data))
	}
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(mediaType) + base64.StdEncoding.EncodedLen(len(data)))
	b.WriteString("data:")
	b.WriteString(mediaType)
	b.WriteString(";base64,")
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	_, _ = enc.Write(data)
	_ = enc.Close()
	return b.String()
}

// Parse decodes a data: URL: its media type (with any parameters but
// ";base64"; empty when the URL names none) and its bytes. Base64 payloads
// may omit their padding; others are percent-decoded. ok is false for
// anything that is not a well-formed data: URL.
func Parse(u string) (mediaType string, data []byte, ok bool) {
	if !Is(u) {
		return "", nil, false
	}
	meta, payload, found := strings.Cut(u[5:], ",")
	if !found {
		return "", nil, false
	}
	if m, b64 := cutSuffixFold(meta, ";base64"); b64 {
		d, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			if d, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(payload, "=")); err != nil {
				return "", nil, false
			}
		}
		return strings.TrimSpace(m), d, true
	}
	s, err := url.PathUnescape(payload)
	if err != nil {
		return "", nil, false
	}
	return strings.TrimSpace(meta), []byte(s), true
}

// MediaType strips parameters (such as "; charset=utf-8") from a media type.
func MediaType(mt string) string {
	mt, _, _ = strings.Cut(mt, ";")
	return strings.TrimSpace(mt)
}

// Inline returns the bytes of a part given either inline (data) or as a
// data: URL, with its media type: mediaType when set, else the URL's. ok
// is false when the part has neither.
func Inline(u, mediaType string, data []byte) (mt string, d []byte, ok bool) {
	if len(data) > 0 {
		return mediaType, data, true
	}
	umt, d, ok := Parse(u)
	if !ok || len(d) == 0 {
		return "", nil, false
	}
	if mediaType == "" {
		mediaType = umt
	}
	return mediaType, d, true
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}
