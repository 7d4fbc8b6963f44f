package mcp

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/safehttp"
)

// ServerConfig says how to reach an MCP server: a command to run (stdio), a
// URL (Streamable HTTP, or the older HTTP+SSE transport), or a transport
// of your own. [Connect] makes a new connection from it whenever it
// (re)connects.
type ServerConfig struct {
	// Name names the server in errors and in what the model is told when
	// the server is unavailable.
	Name string

	// Command and Args start a subprocess speaking MCP on its stdin and
	// stdout. Env adds variables to the current environment; Dir is its
	// working directory; Stderr receives its standard error (discarded when
	// nil).
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	Stderr  io.Writer `json:"-"`

	// URL is a remote server's MCP endpoint, spoken to with the Streamable
	// HTTP transport, or with the HTTP+SSE transport of protocol version
	// 2024-11-05 when SSE is set. Headers go with every request, such as
	// {"Authorization": "Bearer ..."}; they never appear in errors, go
	// only to URL's scheme, host and port (not to a redirect or an SSE
	// message endpoint elsewhere), and never over plain http:// to a host
	// that is not loopback unless AllowInsecureHTTP is set: Connect
	// refuses such a server, naming the opt-out. HTTPClient, when set,
	// sends the requests; it is copied, never changed.
	URL               string
	Headers           map[string]string
	SSE               bool
	HTTPClient        *http.Client `json:"-"`
	AllowInsecureHTTP bool

	// Transport, when set, makes the transport of each connection: an
	// in-memory one in tests, or any the SDK offers.
	Transport func() sdkmcp.Transport `json:"-"`
}

// ErrNoServer is the error of [Connect] given a ServerConfig with neither
// Command, URL nor Transport, or with more than one.
var ErrNoServer = errors.New("mcp: a server needs exactly one of Command, URL or Transport")

func (c *ServerConfig) validate() error {
	n := 0
	for _, set := range []bool{c.Command != "", c.URL != "", c.Transport != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return ErrNoServer
	}
	return c.checkInsecure()
}

// displayName names the server without revealing secrets: its Name, else
// its command, else its URL without query or credentials.
func (c *ServerConfig) displayName() string {
	switch {
	case c.Name != "":
		return c.Name
	case c.Command != "":
		return c.Command
	case c.URL != "":
		return redactURL(c.URL)
	}
	return "server"
}

func (c *ServerConfig) transport() sdkmcp.Transport {
	switch {
	case c.Transport != nil:
		return c.Transport()
	case c.Command != "":
		cmd := exec.Command(c.Command, c.Args...)
		if len(c.Env) > 0 {
			cmd.Env = os.Environ()
			for _, k := range slices.Sorted(maps.Keys(c.Env)) {
				cmd.Env = append(cmd.Env, k+"="+c.Env[k])
			}
		}
		cmd.Dir = c.Dir
		cmd.Stderr = c.Stderr
		return &sdkmcp.CommandTransport{Command: cmd}
	}
	hc := c.httpClient()
	if c.SSE {
		return &sdkmcp.SSEClientTransport{Endpoint: c.URL, HTTPClient: hc}
	}
	return &sdkmcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: hc}
}

// OptOut names, in errors, how a user allows credentials over plain HTTP.
const OptOut = "ServerConfig.AllowInsecureHTTP (allow_insecure_http in a config file's mcp_servers entry)"

// policy keeps the server's credentials (Headers, the URL's user info and
// credential query parameters) with the server's origin; see
// internal/safehttp.
func (c *ServerConfig) policy() *safehttp.Policy {
	p := &safehttp.Policy{AllowInsecureHTTP: c.AllowInsecureHTTP, OptOut: OptOut}
	if u, err := url.Parse(c.URL); err == nil && len(c.Headers) > 0 {
		p.Origin, p.Header = u, make(http.Header, len(c.Headers))
		for k, v := range c.Headers {
			p.Header.Set(k, v)
			p.SecretHeaders = append(p.SecretHeaders, http.CanonicalHeaderKey(k))
		}
	}
	return p
}

// checkInsecure refuses a URL server whose credentials would travel over
// plain HTTP off loopback (see AllowInsecureHTTP).
func (c *ServerConfig) checkInsecure() error {
	if c.URL == "" {
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil // the transport reports it
	}
	if err := c.policy().Check(&http.Request{URL: u, Header: http.Header{}}); err != nil {
		return fmt.Errorf("mcp: server %s: %w", c.displayName(), err)
	}
	return nil
}

// httpClient is HTTPClient (or a default client, never changed) under the
// server's policy: Headers go to the server's origin only, over TLS or
// loopback unless AllowInsecureHTTP, and a redirect elsewhere loses every
// credential.
func (c *ServerConfig) httpClient() *http.Client {
	return c.policy().Client(c.HTTPClient)
}

// redactURL is u without user info, query or fragment, which may carry
// credentials.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}

// redact keeps the server's credentials out of err's message: the URL's
// user info and query (the URL is shown without them) and the values of
// its headers and credential-like environment variables, which a server
// may echo in an error. errors.Is and As still see err.
func (c *ServerConfig) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := msg
	if c.URL != "" {
		red := redactURL(c.URL)
		q := strconv.Quote(c.URL)
		out = strings.ReplaceAll(strings.ReplaceAll(out, c.URL, red), q[1:len(q)-1], red)
	}
	out = httpc.MaskSecrets(out, c.secrets()...)
	if out == msg {
		return err
	}
	return &redactedError{msg: out, err: err}
}

// secrets are the credentials the server is given: header values (and the
// token of an "Authorization: Bearer <token>"), the URL's (see
// safehttp.URLSecrets), and the values of environment variables named
// like a credential (GITHUB_TOKEN, API_KEY).
func (c *ServerConfig) secrets() []string {
	out := safehttp.URLSecrets(c.URL)
	for _, v := range c.Headers {
		if _, tok, ok := strings.Cut(v, " "); ok {
			out = append(out, strings.TrimSpace(tok))
		}
		out = append(out, strings.TrimSpace(v))
	}
	for name, v := range c.Env {
		if safehttp.CredentialParam(name) {
			out = append(out, v)
		}
	}
	return out
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
