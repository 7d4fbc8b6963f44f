package mcp

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Limits bound what the client accepts from an MCP server and how long it
// waits for it: a server is input, and a slow, broken or hostile one must
// not hang a run, fill the memory or flood the model's context. A zero
// field takes its default; set limits with [WithLimits], or in a config
// file under an mcp_servers entry's limits key.
type Limits struct {
	// ConnectTimeout bounds one connection attempt: starting the
	// transport, the initialize handshake and the first tools/list.
	// Default 30s.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// ListTimeout bounds fetching the tool list again, all its pages.
	// Default 30s.
	ListTimeout time.Duration `yaml:"list_timeout"`
	// CallTimeout bounds one tools/call. Default 5m. A run's tool timeout
	// (runlet.WithToolTimeout, ToolPolicy.Timeout) applies too.
	CallTimeout time.Duration `yaml:"call_timeout"`

	// MaxPages bounds the pages of one tools/list. Default 100.
	MaxPages int `yaml:"max_pages"`
	// MaxTools bounds the tools one list holds, counted before
	// [WithFilter]. Default 1000.
	MaxTools int `yaml:"max_tools"`
	// MaxDescriptionBytes cuts a longer tool description (or title).
	// Default 8 KiB.
	MaxDescriptionBytes int `yaml:"max_description_bytes"`
	// MaxSchemaBytes leaves out a tool whose input schema, as JSON, is
	// larger. Default 64 KiB.
	MaxSchemaBytes int `yaml:"max_schema_bytes"`
	// MaxMessageBytes bounds one JSON-RPC message from the server, such as
	// a tool's result or a page of tools: over HTTP the body or
	// server-sent event is not read past it. Default 16 MiB; over stdio
	// the SDK refuses a line longer than 16 MiB whatever this says.
	MaxMessageBytes int `yaml:"max_message_bytes"`
}

// The default Limits.
const (
	DefaultConnectTimeout      = 30 * time.Second
	DefaultListTimeout         = 30 * time.Second
	DefaultCallTimeout         = 5 * time.Minute
	DefaultMaxPages            = 100
	DefaultMaxTools            = 1000
	DefaultMaxDescriptionBytes = 8 << 10
	DefaultMaxSchemaBytes      = 64 << 10
	DefaultMaxMessageBytes     = 16 << 20
)

// withDefaults is l with every zero (or negative) field set to its default.
func (l Limits) withDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ConnectTimeout, DefaultConnectTimeout)
	def(&l.ListTimeout, DefaultListTimeout)
	def(&l.CallTimeout, DefaultCallTimeout)
	defInt(&l.MaxPages, DefaultMaxPages)
	defInt(&l.MaxTools, DefaultMaxTools)
	defInt(&l.MaxDescriptionBytes, DefaultMaxDescriptionBytes)
	defInt(&l.MaxSchemaBytes, DefaultMaxSchemaBytes)
	defInt(&l.MaxMessageBytes, DefaultMaxMessageBytes)
	return l
}

// WithLimits sets the [Limits] for [Tools] and [Connect]; its zero fields
// keep their defaults.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = l }
}

// WithLogger sets where warnings about a server's tools go: a tool left
// out (its name taken, its schema too large or invalid) or a description
// cut. The default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// LimitError is the error of a server that went past one of the [Limits].
type LimitError struct {
	// Server names the server.
	Server string
	// Limit is the name of the Limits field, such as "MaxTools".
	Limit string
	// Value is the limit that was reached: a count, a size in bytes or a
	// time.Duration.
	Value int64
}

func (e *LimitError) Error() string {
	v := fmt.Sprint(e.Value)
	if e.Limit == "ConnectTimeout" || e.Limit == "ListTimeout" || e.Limit == "CallTimeout" {
		return fmt.Sprintf("mcp: the MCP server %s did not answer within %v (Limits.%s)", e.Server, time.Duration(e.Value), e.Limit)
	}
	return fmt.Sprintf("mcp: the MCP server %s went past Limits.%s (%s)", e.Server, e.Limit, v)
}

// AuthError is the error of a server that answered an HTTP request with
// 401 Unauthorized or 403 Forbidden: it needs a token, or refused the one
// sent. It is not retried, since the same request would be refused again.
type AuthError struct {
	// Server names the server.
	Server string
	// StatusCode is 401 or 403.
	StatusCode int
}

func (e *AuthError) Error() string {
	what := "needs a token or refused the one sent"
	if e.StatusCode == http.StatusForbidden {
		what = "refused the token sent (it may lack a permission)"
	}
	return fmt.Sprintf("mcp: the MCP server %s answered %d %s: it %s; set the token in an Authorization header "+
		"(ServerConfig.Headers; headers of the mcp_servers entry in a config file, such as "+
		`Authorization: "Bearer ${TOKEN}")`, e.Server, e.StatusCode, http.StatusText(e.StatusCode), what)
}
