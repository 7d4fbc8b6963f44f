// Package secret masks credentials in printed values. A type that holds a
// credential implements fmt.Formatter, slog.LogValuer and json.Marshaler
// by printing a copy of itself with its credentials masked, converted to a
// type without those methods (so the copy prints field by field):
//
//	type plainModel Model
//
//	func (m Model) Format(s fmt.State, verb rune) { secret.Format(s, verb, "config.Model", plainModel(m.masked())) }
//	func (m Model) LogValue() slog.Value         { return slog.AnyValue(plainModel(m.masked())) }
//	func (m Model) MarshalJSON() ([]byte, error) { return json.Marshal(plainModel(m.masked())) }
//
// Format covers every verb, not only %v: %d or %x of a struct prints its
// strings too.
package secret

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

// String is Mask, or "" for an empty s, which shows that no secret is set.
func String(s string) string {
	if s == "" {
		return ""
	}
	return Mask
}

// Values is m with every value masked; the keys (header or variable names)
// are kept.
func Values(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = String(v)
	}
	return out
}

// Header is h with every value masked.
func Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := maps.Clone(h)
	for k, vs := range out {
		masked := make([]string, len(vs))
		for i, v := range vs {
			masked[i] = String(v)
		}
		out[k] = masked
	}
	return out
}

// URL is raw with what may carry a credential masked: the user info, every
// query value and the fragment. An unparsable non-empty URL is all Mask.
func URL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return ""
	case err != nil || strings.Contains(u.Opaque, "@"):
		return Mask
	case u.User == nil && u.RawQuery == "" && u.Fragment == "":
		return raw
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme + ":")
	}
	if u.Opaque != "" {
		b.WriteString(u.Opaque)
	} else {
		if u.Scheme != "" || u.Host != "" {
			b.WriteString("//")
		}
		if u.User != nil {
			b.WriteString(Mask + "@")
		}
		b.WriteString(u.Host)
		b.WriteString(u.EscapedPath())
	}
	if u.RawQuery != "" {
		b.WriteByte('?')
		for i, kv := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			k, _, _ := strings.Cut(kv, "=")
			b.WriteString(k + "=" + Mask)
		}
	}
	if u.Fragment != "" {
		b.WriteString("#" + Mask)
	}
	return b.String()
}

// Format prints masked, a copy of a value with its credentials masked and
// of a type without a Format method, as the verb and flags in s ask. For
// %#v it names the type typeName (such as "config.Model"), not masked's.
func Format(s fmt.State, verb rune, typeName string, masked any) {
	out := fmt.Sprintf(fmt.FormatString(s, verb), masked)
	if verb == 'v' && s.Flag('#') {
		out = strings.Replace(out, fmt.Sprintf("%T", masked), typeName, 1)
	}
	io.WriteString(s, out)
}
