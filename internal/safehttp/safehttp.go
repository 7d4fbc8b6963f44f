// Package safehttp keeps credentials with their host. The HTTP clients of
// the provider adapters (through internal/httpc) and of the MCP client are
// built with it, so all of them follow the same rules:
//
//   - A credential goes only to the origin (scheme, host and port) it was
//     given for. On a redirect to another origin, the credential headers
//     (Authorization, Proxy-Authorization, Cookie, X-Api-Key,
//     X-Goog-Api-Key, Api-Key, and every header the policy names), the
//     URL's user info and every credential-like query parameter are
//     dropped. net/http alone keeps Authorization across ports, schemes
//     and subdomains of one host, and custom headers such as X-Api-Key
//     everywhere.
//   - A credential never travels in clear text off loopback: a request
//     that carries one over plain http:// to a host other than
//     127.0.0.0/8, ::1 or localhost is refused unless the policy allows
//     it, and so is a redirect that would take a request with a
//     credential there.
//
// Same-origin redirects keep their credentials. A 307 or 308 redirect
// re-sends the request body (the prompt, never a key) to wherever the
// configured server points, as net/http does.
package safehttp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/runlet/runlet/internal/secret"
)

// credentialHeaders are the request headers that carry a credential in
// every client, whatever the policy says.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "X-Goog-Api-Key", "Api-Key"}

// Policy says what a client's credentials are and where they may go. The
// zero Policy guards the built-in credential headers and allows nothing
// insecure.
type Policy struct {
	// SecretHeaders names the headers, besides the built-in ones, that
	// carry a credential: the user's own headers, say.
	SecretHeaders []string
	// Origin and Header, when set, make the client's transport add Header
	// to every request to Origin (and to no other): the MCP client's
	// configured headers, which must not follow a redirect or an SSE
	// endpoint to another host.
	Origin *url.URL
	Header http.Header
	// AllowInsecureHTTP lets credentials go over plain http:// to hosts
	// that are not loopback.
	AllowInsecureHTTP bool
	// OptOut says how a user sets AllowInsecureHTTP, for the error:
	// "Config.AllowInsecureHTTP (allow_insecure_http in a config file)".
	OptOut string
}

// InsecureError is the error of a request refused because it would carry
// a credential in clear text to a host that is not loopback.
type InsecureError struct {
	URL      string // without user info or query
	Redirect bool   // the server redirected a request there
	OptOut   string // how to allow it
}

func (e *InsecureError) Error() string {
	what := "refusing to send a credential"
	if e.Redirect {
		what = "refusing a redirect that would send a credential"
	}
	msg := what + " over plain HTTP to " + e.URL + ", which is not a loopback address; use https"
	if e.OptOut != "" {
		msg += ", or allow clear-text credentials with " + e.OptOut
	}
	return msg
}

// Client returns a copy of hc (nil means http.DefaultClient) whose
// redirects follow the policy, before hc's own CheckRedirect (or the
// default limit of 10 redirects) is asked; when the policy has an Origin
// and Header, its transport adds Header to requests to that origin. hc
// itself is not changed.
func (p *Policy) Client(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	c.CheckRedirect = p.checkRedirect(c.CheckRedirect)
	if p.Origin != nil && len(p.Header) > 0 {
		c.Transport = &transport{base: c.Transport, p: p}
	}
	return c
}

// Check returns an *InsecureError when req carries a credential over
// plain HTTP to a host that is not loopback and the policy does not allow
// it.
func (p *Policy) Check(req *http.Request) error {
	if p.AllowInsecureHTTP || !Insecure(req.URL) || !p.carries(req) {
		return nil
	}
	return &InsecureError{URL: RedactURL(req.URL), OptOut: p.OptOut}
}

// checkRedirect drops the credentials of a redirect that leaves the first
// request's origin, refuses one that takes a request with a credential to
// plain HTTP off loopback, then asks next.
func (p *Policy) checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0]
		origin := OriginOf(first.URL)
		cross := OriginOf(req.URL) != origin
		for _, r := range via[1:] {
			cross = cross || OriginOf(r.URL) != origin
		}
		carried := p.carries(first)
		if cross {
			p.strip(req, first)
		}
		if (carried || p.carries(req)) && !p.AllowInsecureHTTP && Insecure(req.URL) {
			return &InsecureError{URL: RedactURL(req.URL), Redirect: true, OptOut: p.OptOut}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// carries reports whether req carries a credential.
func (p *Policy) carries(req *http.Request) bool {
	if req.URL.User != nil || (p.Origin != nil && len(p.Header) > 0 && OriginOf(req.URL) == OriginOf(p.Origin)) {
		return true
	}
	for _, names := range [][]string{credentialHeaders, p.SecretHeaders} {
		for _, h := range names {
			if req.Header.Get(h) != "" {
				return true
			}
		}
	}
	for name := range req.URL.Query() {
		if CredentialParam(name) {
			return true
		}
	}
	return false
}

// strip removes from req, bound for another origin than first, the
// credentials net/http copied from first: the credential headers, the
// Referer, user info, and query parameters named like a credential or
// holding one of first's credential values.
func (p *Policy) strip(req, first *http.Request) {
	var values []string
	for _, names := range [][]string{credentialHeaders, p.SecretHeaders} {
		for _, h := range names {
			for _, v := range first.Header.Values(h) {
				if _, tok, ok := strings.Cut(v, " "); ok {
					values = append(values, tok) // "Bearer <key>"
				}
				values = append(values, v)
			}
			req.Header.Del(h)
		}
	}
	for _, vs := range first.URL.Query() {
		values = append(values, vs...)
	}
	// net/http sets Referer to the previous URL, query (and so a key in
	// it) included.
	req.Header.Del("Referer")
	req.URL.User = nil
	q := req.URL.Query()
	changed := false
	for name, vs := range q {
		if CredentialParam(name) || holdsAny(vs, values) {
			delete(q, name)
			changed = true
		}
	}
	if changed {
		req.URL.RawQuery = q.Encode()
	}
}

// holdsAny reports whether one of vs holds one of secrets (of 8 bytes or
// more, so that short ordinary values do not match).
func holdsAny(vs, secrets []string) bool {
	for _, v := range vs {
		for _, s := range secrets {
			if len(s) >= 8 && strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}

// CredentialParam reports whether a query parameter's name says it holds
// a credential: Gemini's key, api_key, access_token, and the like.
func CredentialParam(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "key", "sig", "signature", "code", "auth", "pass", "pwd":
		return true
	}
	for _, part := range []string{"key", "token", "secret", "passw", "auth", "credential"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// URLSecrets returns the credentials raw carries, as an error text could
// show them: the user info's password (or its name, when it has no
// password: a token), the Basic credentials net/http sends for the user
// info, and the values of credential query parameters, decoded and as
// they appear in the URL. An unparsable raw gives nil.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		name := u.User.Username()
		pw, ok := u.User.Password()
		if ok {
			out = append(out, pw, url.QueryEscape(pw))
		} else {
			out = append(out, name, url.QueryEscape(name))
		}
		out = append(out, base64.StdEncoding.EncodeToString([]byte(name+":"+pw)))
	}
	for name, vs := range u.Query() {
		if CredentialParam(name) {
			for _, v := range vs {
				out = append(out, v, url.QueryEscape(v))
			}
		}
	}
	return out
}

// Origin is a URL's scheme, host and port, the unit a credential is
// given to.
type Origin struct{ Scheme, Host, Port string }

// OriginOf returns u's origin, with the scheme's default port filled in
// and names lowercased.
func OriginOf(u *url.URL) Origin {
	o := Origin{Scheme: strings.ToLower(u.Scheme), Host: strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), Port: u.Port()}
	if o.Port == "" {
		switch o.Scheme {
		case "http":
			o.Port = "80"
		case "https":
			o.Port = "443"
		}
	}
	return o
}

// Insecure reports whether a request to u would travel in clear text off
// the machine: plain http:// (or ws://) to a host that is not loopback.
func Insecure(u *url.URL) bool {
	s := strings.ToLower(u.Scheme)
	return (s == "http" || s == "ws") && !Loopback(u.Hostname())
}

// Loopback reports whether host is localhost or a loopback address
// (127.0.0.0/8, ::1).
func Loopback(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// RedactURL is u without user info, query or fragment, which may carry
// credentials.
func RedactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// transport adds the policy's Header to requests to its Origin.
type transport struct {
	base http.RoundTripper
	p    *Policy
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if OriginOf(req.URL) != OriginOf(t.p.Origin) {
		return base.RoundTrip(req)
	}
	if err := t.p.Check(req); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	req = req.Clone(req.Context())
	for k, v := range t.p.Header {
		req.Header[k] = v
	}
	return base.RoundTrip(req)
}

// plainPolicy is a Policy without methods, so its masked copy prints
// field by field.
type plainPolicy Policy

func (p Policy) masked() plainPolicy {
	p.Header = secret.Header(p.Header)
	if p.Origin != nil {
		p.Origin = &url.URL{Scheme: p.Origin.Scheme, Host: p.Origin.Host} // no user info or query
	}
	return plainPolicy(p)
}

// Format prints the Policy with Header's values masked, for every verb.
func (p Policy) Format(s fmt.State, verb rune) { secret.Format(s, verb, "safehttp.Policy", p.masked()) }

// LogValue is the Policy with Header's values masked.
func (p Policy) LogValue() slog.Value { return slog.AnyValue(p.masked()) }

// MarshalJSON encodes the Policy with Header's values masked.
func (p Policy) MarshalJSON() ([]byte, error) { return json.Marshal(p.masked()) }
