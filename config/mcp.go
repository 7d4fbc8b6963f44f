package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
)

// MCPServer is an entry of mcp_servers: an MCP server whose tools the agent
// may call, named NAME_TOOL. It is a command speaking MCP on stdio, or a
// remote server's URL (Streamable HTTP; the older HTTP+SSE transport with
// sse: true):
//
//	mcp_servers:
//	  - name: files
//	    command: npx
//	    args: [-y, "@modelcontextprotocol/server-filesystem", /tmp]
//	    env: {LOG_LEVEL: warn}
//	  - name: github
//	    url: https://api.githubcopilot.com/mcp/
//	    headers: {Authorization: "Bearer ${GITHUB_TOKEN}"}
//	    tools: [search_issues, get_issue]   # only these; default all
//	    require_approval: true              # every call waits for approval
//	    timeout: 30s                        # per call
//	    limits: {connect_timeout: 10s, max_tools: 200}
//
// limits bounds what the client accepts from the server (mcp.Limits):
// connect_timeout, list_timeout, call_timeout (default: timeout, else
// 5m), max_pages, max_tools, max_description_bytes, max_schema_bytes and
// max_message_bytes; an unset one keeps its default.
//
// Headers go only to the server's scheme, host and port, and never over
// plain http:// off loopback unless allow_insecure_http is true.
type MCPServer struct {
	Name            string            `yaml:"name"`
	Command         string            `yaml:"command"`
	Args            []string          `yaml:"args"`
	Env             map[string]string `yaml:"env" config:"credential"`
	URL             string            `yaml:"url" config:"credential"`
	Headers         map[string]string `yaml:"headers" config:"credential"`
	SSE             bool              `yaml:"sse"`
	Tools           []string          `yaml:"tools"`
	RequireApproval bool              `yaml:"require_approval"`
	Timeout         time.Duration     `yaml:"timeout"`
	Limits          mcp.Limits        `yaml:"limits"`

	// AllowInsecureHTTP lets headers go over plain http:// to a host that
	// is not loopback (mcp.ServerConfig.AllowInsecureHTTP).
	AllowInsecureHTTP bool `yaml:"allow_insecure_http"`
}

// validateMCP checks the mcp_servers entries.
func (f *File) validateMCP(bad fieldSet) []error {
	var errs []error
	seen := map[string]bool{}
	for i, s := range f.MCPServers {
		field := "mcp_servers." + strconv.Itoa(i)
		if bad.under(field) {
			seen[s.Name] = true
			continue
		}
		switch {
		case s.Name == "":
			errs = append(errs, f.errAt(field, "", "name is required; tools are named NAME_TOOL"))
		case !serverName(s.Name):
			errs = append(errs, f.errAt(field+".name", s.Name, "name %q may hold only letters, digits, '_' and '-'", s.Name))
		case seen[s.Name]:
			errs = append(errs, f.errAt(field+".name", s.Name, "server %q is listed twice", s.Name))
		}
		seen[s.Name] = true
		switch {
		case (s.Command == "") == (s.URL == ""):
			errs = append(errs, f.errAt(field, "", "needs either command (a server on stdio) or url (a remote server)"))
		case s.URL != "":
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, f.errAt(field+".url", "", "want an http or https URL"))
			}
		case s.SSE || len(s.Headers) > 0:
			errs = append(errs, f.errAt(field, "", "sse and headers go with url, not command"))
		}
	}
	return errs
}

// serverName reports whether s makes a tool-name prefix as is.
func serverName(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ServerConfig is how mcp.Connect reaches the server; stderr receives a
// command's standard error (nil discards it).
func (s MCPServer) ServerConfig(stderr io.Writer) mcp.ServerConfig {
	return mcp.ServerConfig{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, Stderr: stderr,
		URL: s.URL, Headers: s.Headers, SSE: s.SSE, AllowInsecureHTTP: s.AllowInsecureHTTP}
}

// options are the mcp.Connect options the entry asks for.
func (s MCPServer) options() []mcp.Option {
	lim := s.Limits
	if lim.CallTimeout == 0 {
		lim.CallTimeout = s.Timeout
	}
	opts := []mcp.Option{mcp.WithPrefix(s.Name + "_"), mcp.WithLimits(lim)}
	if len(s.Tools) > 0 {
		opts = append(opts, mcp.WithFilter(func(t *sdkmcp.Tool) bool { return slices.Contains(s.Tools, t.Name) }))
	}
	if s.RequireApproval || s.Timeout > 0 {
		p := runlet.ToolPolicy{RequiresApproval: s.RequireApproval, Timeout: s.Timeout}
		opts = append(opts, mcp.WithPolicy(func(*sdkmcp.Tool) runlet.ToolPolicy { return p }))
	}
	return opts
}

// ConnectMCP connects to the config's MCP servers and adds their tools to
// the agent (Agent.Toolsets), which then follows their tool lists and
// reconnects as mcp.Toolset does. stderr receives the standard error of
// servers run as commands; nil discards it. Close the returned Closer when
// done with the agent. A server that cannot be reached fails ConnectMCP,
// naming it, with nothing left open.
func (s *Setup) ConnectMCP(ctx context.Context, stderr io.Writer) (io.Closer, error) {
	var conns mcpConns
	for i, srv := range s.File.MCPServers {
		ts, err := mcp.Connect(ctx, srv.ServerConfig(stderr), srv.options()...)
		if err != nil {
			conns.Close()
			return nil, fmt.Errorf("config: mcp_servers.%d (%s): %w", i, srv.Name, err)
		}
		conns = append(conns, ts)
		s.Agent.Toolsets = append(s.Agent.Toolsets, ts)
	}
	return conns, nil
}

type mcpConns []*mcp.Toolset

func (c mcpConns) Close() error {
	var errs []error
	for _, ts := range c {
		errs = append(errs, ts.Close())
	}
	return errors.Join(errs...)
}
