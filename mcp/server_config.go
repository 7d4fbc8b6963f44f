package mcp

import (
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
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
	Stderr  io.Writer

	// URL is a remote server's MCP endpoint, spoken to with the Streamable
	// HTTP transport, or with the HTTP+SSE transport of protocol version
	// 2024-11-05 when SSE is set. Headers go with every request, such as
	// {"Authorization": "Bearer ..."}; they never appear in errors.
	// HTTPClient, when set, sends the requests.
	URL        string
	Headers    map[string]string
	SSE        bool
	HTTPClient *http.Client

	// Transport, when set, makes the transport of each connection: an
	// in-memory one in tests, or any the SDK offers.
	Transport func() sdkmcp.Transport
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
	return nil
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

// httpClient is HTTPClient (or a default client) sending Headers.
func (c *ServerConfig) httpClient() *http.Client {
	if len(c.Headers) == 0 {
		return c.HTTPClient
	}
	hc := &http.Client{}
	if c.HTTPClient != nil {
		*hc = *c.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hdr := make(http.Header, len(c.Headers))
	for k, v := range c.Headers {
		hdr.Set(k, v)
	}
	hc.Transport = &headerTransport{base: base, header: hdr}
	return hc
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.header {
		req.Header[k] = v
	}
	return t.base.RoundTrip(req)
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

// redact keeps the URL's secrets out of err's message; errors.Is and As
// still see err.
func (c *ServerConfig) redact(err error) error {
	if err == nil || c.URL == "" {
		return err
	}
	msg := err.Error()
	red := redactURL(c.URL)
	if red == c.URL || !strings.Contains(msg, c.URL) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(msg, c.URL, red), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
