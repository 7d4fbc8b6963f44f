package cli

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/internal/demo"
	"github.com/runlet/runlet/mcp"
)

const mcpFlagHelp = `  --mcp SERVER           use the tools of an MCP server, repeatable: a URL
                         (Streamable HTTP) or a command line (split at spaces,
                         run on stdio), optionally named NAME=...; tools are
                         named NAME_TOOL (default name: mcp, mcp2, ...):
                         --mcp files="npx -y @modelcontextprotocol/server-filesystem /tmp"
                         (mcp_servers: in --config for headers, env, filters)
`

const mcpUsage = `Usage: runlet mcp serve [flags]

Serves an agent as an MCP server, so that an MCP client (Claude Desktop,
Claude Code, Cursor, another runlet with --mcp) can call it as a tool. The
tool takes a prompt (and, with a store, a session_id that continues
a conversation) and returns the agent's answer; progress notifications
follow its model and tool calls; a cancelled request stops the run.

It speaks MCP on standard input and output (for clients that start it), or
over Streamable HTTP with --http. Logs go to standard error.

Flags:
  --http ADDR            serve Streamable HTTP on ADDR (such as
                         127.0.0.1:8080) at /mcp instead of stdio. With
                         RUNLET_MCP_TOKEN set, every request must carry
                         "Authorization: Bearer $RUNLET_MCP_TOKEN"; without
                         it, ADDR must be a loopback address (anyone who
                         reaches the port spends your model's API key). An
                         empty RUNLET_MCP_TOKEN is refused
  --allow-origin ORIGIN  a web origin (https://app.example.com) whose pages
                         may call the server, repeatable; requests from other
                         origins get 403, except loopback ones (DNS
                         rebinding protection); "*" allows all
  --max-sessions N       the most MCP sessions open at once (default 100)
  --session-timeout D    close a session idle for D (default 10m)
  --name NAME            the tool's name (default: the agent's name)
  --description TEXT     what the tool does, for the client's model
  --session-store FILE   keep conversations by session_id in this SQLite file
                         (default: the config's store:, if it has one; else
                         no session_id)

` + modelFlagsHelp + `
Examples:
  runlet mcp serve --config agent.yaml
  runlet mcp serve --config agent.yaml --http 127.0.0.1:8080
  claude mcp add research -- runlet mcp serve --config /path/to/agent.yaml
`

// mcpFlag collects --mcp values, which may contain commas.
type mcpFlag []string

func (m *mcpFlag) String() string { return strings.Join(*m, " ") }

func (m *mcpFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("want a URL or a command")
	}
	*m = append(*m, s)
	return nil
}

var mcpName = regexp.MustCompile(`^[A-Za-z0-9_-]+=`)

// mcpServers turns --mcp values into config entries.
func mcpServers(values []string, taken []config.MCPServer) []config.MCPServer {
	used := map[string]bool{}
	for _, s := range taken {
		used[s.Name] = true
	}
	var out []config.MCPServer
	for _, v := range values {
		var s config.MCPServer
		if m := mcpName.FindString(v); m != "" {
			s.Name, v = strings.TrimSuffix(m, "="), v[len(m):]
		}
		for n := 1; s.Name == ""; n++ {
			name := "mcp"
			if n > 1 {
				name += strconv.Itoa(n)
			}
			if !used[name] {
				s.Name = name
			}
		}
		used[s.Name] = true
		if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
			s.URL = strings.TrimSpace(v)
		} else if fields := strings.Fields(v); len(fields) > 0 {
			s.Command, s.Args = fields[0], fields[1:]
		}
		out = append(out, s)
	}
	return out
}

// cmdMCP runs "runlet mcp ...".
func (a *app) cmdMCP(args []string) int {
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(a.stdout)
			return exitOK
		}
		return a.usage("mcp", errors.New("want a subcommand: runlet mcp serve"))
	}
	var f flags
	fs := newFlagSet("mcp serve", &f)
	var httpAddr, name, desc string
	var httpOpts mcp.HTTPOptions
	fs.StringVar(&httpAddr, "http", "", "")
	fs.Var((*listFlag)(&httpOpts.AllowedOrigins), "allow-origin", "")
	fs.IntVar(&httpOpts.MaxSessions, "max-sessions", 0, "")
	fs.DurationVar(&httpOpts.SessionIdleTimeout, "session-timeout", 0, "")
	fs.StringVar(&name, "name", "", "")
	fs.StringVar(&desc, "description", "", "")
	fs.StringVar(&f.store, "session-store", "", "")
	pos, err := parseArgs(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(a.stdout)
		return exitOK
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err == nil {
		err = f.validate()
	}
	if err == nil && httpAddr == "" && (len(httpOpts.AllowedOrigins) > 0 || httpOpts.MaxSessions != 0 || httpOpts.SessionIdleTimeout != 0) {
		err = errors.New("--allow-origin, --max-sessions and --session-timeout need --http")
	}
	token, tokenSet := a.lookupEnv("RUNLET_MCP_TOKEN")
	if err == nil && httpAddr != "" && tokenSet && strings.TrimSpace(token) == "" {
		// Empty must not mean "no authentication": a deployment that
		// meant to set a token and got an empty one would serve anyone.
		err = errors.New("RUNLET_MCP_TOKEN is set but empty: set it to a secret token, or unset it to serve loopback without one")
	}
	if err != nil {
		return a.usage("mcp serve", err)
	}
	f.serveSessions = true // a store from --session-store or the config's store:

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := a.prepare(ctx, &f)
	if err != nil {
		return a.prepareFailed("mcp serve", err)
	}
	defer s.close(a)
	if s.demo != nil {
		fmt.Fprintf(a.stderr, "runlet: no model is configured, so the agent REPLAYS a recorded session offline: it answers ONE call,\n"+
			"        with the recording's answer to %q whatever the prompt; later calls fail.\n        %s\n", demo.Question, demo.GoLive)
	}
	server := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: strings.Fields(versionString())[1]}, nil)
	agentTool := mcp.AgentTool{Agent: s.setup.Agent, Runtime: s.rt, Name: name, Description: desc, Sessions: s.store != nil}
	if err := mcp.AddAgent(server, agentTool); err != nil {
		return a.serveFailed(err)
	}
	if httpAddr != "" {
		return a.serveHTTP(ctx, server, httpAddr, token, &httpOpts)
	}
	t := &sdkmcp.IOTransport{Reader: io.NopCloser(a.stdin), Writer: nopCloser{a.stdout}}
	if err := server.Run(ctx, t); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return a.serveFailed(err)
	}
	return exitOK
}

// serveHTTP serves Streamable HTTP at /mcp until ctx ends, bounded by
// opts. A non-empty token is required of every request as a bearer token;
// without one, only a loopback address is served.
func (a *app) serveHTTP(ctx context.Context, server *sdkmcp.Server, addr, token string, opts *mcp.HTTPOptions) int {
	if token == "" && !loopback(addr) {
		fmt.Fprintf(a.stderr, "runlet mcp serve: --http %s is not a loopback address, and the agent would answer (on your API key) anyone who reaches it: set RUNLET_MCP_TOKEN to require \"Authorization: Bearer <token>\", or serve on 127.0.0.1\n", addr)
		return exitUsage
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(a.stderr, "runlet mcp serve: --http %s: %s\n", printable(addr), printable(err.Error()))
		return exitUsage
	}
	var h http.Handler = mcp.HTTPHandler(server, opts)
	if token != "" {
		h = requireBearer(token, h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	// The handler bounds bodies, sessions and calls; the server bounds the
	// rest of what a client sends: headers, in time and size, and idle
	// connections.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	fmt.Fprintf(a.stderr, "runlet: serving MCP at http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		// Requests in flight get a moment to finish; long-lived event
		// streams (a client's standalone GET) are then cut.
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if hs.Shutdown(shutdown) != nil {
			hs.Close()
		}
		err = <-errc
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return a.serveFailed(err)
	}
	return exitOK
}

// serveFailed prints why serving stopped and returns its exit code. The
// error may quote what a client sent, so it reaches the terminal as text.
func (a *app) serveFailed(err error) int {
	fmt.Fprintf(a.stderr, "runlet mcp serve: %s\n", printable(err.Error()))
	return exitFailed
}

// loopback reports whether addr (host:port) listens on loopback only: a
// loopback IP or "localhost". An empty host listens on every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// requireBearer answers 401 to a request without "Authorization: Bearer
// token", comparing in constant time.
func requireBearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="runlet"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
