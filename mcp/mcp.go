package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/toolname"
)

// MaxNameLen is the longest tool name Tools produces: what OpenAI accepts.
const MaxNameLen = toolname.MaxLen

// Option configures [Tools] and [Connect].
type Option func(*config)

type config struct {
	prefix string
	filter func(*sdkmcp.Tool) bool
	policy func(*sdkmcp.Tool) runlet.ToolPolicy
	limits Limits // with defaults, after newConfig
	logger *slog.Logger

	// Toolset only.
	attempts  int
	backoff   time.Duration
	onChanged func()
	client    *sdkmcp.Implementation
}

// WithPrefix puts prefix before every tool name, such as "github_", so that
// tools of different servers do not clash. The prefix is sanitised like the
// names.
func WithPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithFilter exposes only the tools for which keep returns true. It sees
// the tool as the server describes it, with its MCP name.
func WithFilter(keep func(t *sdkmcp.Tool) bool) Option {
	return func(c *config) { c.filter = keep }
}

// WithPolicy sets each tool's runlet.ToolPolicy (timeout, approval), such
// as requiring approval for every tool the server does not annotate as
// read-only:
//
//	mcp.WithPolicy(func(t *sdkmcp.Tool) runlet.ToolPolicy {
//		readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
//		return runlet.ToolPolicy{RequiresApproval: !readOnly}
//	})
func WithPolicy(policy func(t *sdkmcp.Tool) runlet.ToolPolicy) Option {
	return func(c *config) { c.policy = policy }
}

// Tools lists the tools of the server behind session, following
// pagination within the [Limits], and returns them as runlet tools calling
// the server through session. The session must stay open while the tools
// are in use. The list is a snapshot; [Connect] gives a [Toolset] that
// follows changes and reconnects. Limits.MaxMessageBytes is for the
// transport, which the caller made: Tools cannot apply it.
func Tools(ctx context.Context, session *sdkmcp.ClientSession, opts ...Option) ([]runlet.Tool, error) {
	if session == nil {
		return nil, errors.New("mcp: nil session")
	}
	c := newConfig(opts)
	server := "server"
	if ir := session.InitializeResult(); ir != nil && ir.ServerInfo != nil && ir.ServerInfo.Name != "" {
		server = cleanText(ir.ServerInfo.Name, maxShownName)
	}
	ctx, cancel := context.WithTimeout(ctx, c.limits.ListTimeout)
	defer cancel()
	tools, _, err := listTools(ctx, session, &c, server, sessionCaller{session})
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = &LimitError{Server: server, Limit: "ListTimeout", Value: int64(c.limits.ListTimeout)}
	}
	return tools, err
}

func newConfig(opts []Option) config {
	c := config{attempts: 3, backoff: 200 * time.Millisecond}
	for _, o := range opts {
		o(&c)
	}
	c.limits = c.limits.withDefaults()
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// caller sends tools/call.
type caller interface {
	callTool(ctx context.Context, params *sdkmcp.CallToolParams) (*sdkmcp.CallToolResult, error)
}

type sessionCaller struct{ s *sdkmcp.ClientSession }

func (c sessionCaller) callTool(ctx context.Context, p *sdkmcp.CallToolParams) (*sdkmcp.CallToolResult, error) {
	return c.s.CallTool(ctx, p)
}

// listTools lists the server's tools, page by page within c.limits, as
// runlet tools calling through src, and the set of their MCP names.
func listTools(ctx context.Context, session *sdkmcp.ClientSession, c *config, server string, src caller) ([]runlet.Tool, map[string]bool, error) {
	lim := &c.limits
	l := lister{c: c, server: server, src: src, prefix: sanitize(c.prefix),
		byName: make(map[string]string), mcpNames: make(map[string]bool)}
	params := &sdkmcp.ListToolsParams{}
	for pages, count := 0, 0; ; {
		if pages == lim.MaxPages {
			return nil, nil, &LimitError{Server: server, Limit: "MaxPages", Value: int64(lim.MaxPages)}
		}
		pages++
		res, err := session.ListTools(ctx, params)
		if err != nil {
			return nil, nil, fmt.Errorf("mcp: listing tools: %w", err)
		}
		if count += len(res.Tools); count > lim.MaxTools {
			return nil, nil, &LimitError{Server: server, Limit: "MaxTools", Value: int64(lim.MaxTools)}
		}
		for _, t := range res.Tools {
			l.add(t)
		}
		if res.NextCursor == "" {
			return l.tools, l.mcpNames, nil
		}
		params = &sdkmcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// lister turns the tools of a list into runlet tools.
type lister struct {
	c        *config
	server   string
	src      caller
	prefix   string
	tools    []runlet.Tool
	byName   map[string]string // runlet name -> MCP name
	mcpNames map[string]bool
}

// add adds t, unless it is filtered out or left out: its runlet name is
// taken by a tool listed before it, or its input schema is too large or
// invalid. A tool left out is logged; the others are kept.
func (l *lister) add(t *sdkmcp.Tool) {
	c := l.c
	if t == nil || (c.filter != nil && !c.filter(t)) {
		return
	}
	shown := cleanText(t.Name, maxShownName)
	leaveOut := func(why string) {
		c.logger.Warn("mcp: tool left out", "server", l.server, "tool", shown, "reason", why)
	}
	name := toolName(l.prefix, t.Name)
	if prev, ok := l.byName[name]; ok {
		leaveOut(fmt.Sprintf("its name becomes %s, as the name of %s listed before it does", name, cleanText(prev, maxShownName)))
		return
	}
	schema, err := inputSchema(t.InputSchema, c.limits.MaxSchemaBytes)
	if err != nil {
		leaveOut("input schema: " + err.Error())
		return
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if len(desc) > c.limits.MaxDescriptionBytes {
		c.logger.Warn("mcp: tool description cut", "server", l.server, "tool", shown, "bytes", len(desc), "limit", c.limits.MaxDescriptionBytes)
	}
	desc = cleanText(desc, c.limits.MaxDescriptionBytes)
	mt := &tool{
		src:     l.src,
		mcpName: t.Name,
		shown:   shown,
		server:  l.server,
		timeout: c.limits.CallTimeout,
		spec:    runlet.ToolSpec{Name: name, Description: desc, InputSchema: schema},
	}
	if t.OutputSchema != nil {
		if mt.output, err = outputSchema(t.OutputSchema, c.limits.MaxSchemaBytes); err != nil {
			leaveOut("output schema: " + err.Error())
			return
		}
	}
	if c.policy != nil {
		mt.policy = c.policy(t)
	}
	l.byName[name] = t.Name
	l.tools = append(l.tools, mt)
	l.mcpNames[t.Name] = true
}

// ToolError is the error a tool returns when the server's result has
// isError set: the tool ran and failed. Its message is the result's text.
type ToolError struct {
	// Tool is the MCP name of the tool.
	Tool string
	// Text is the result's content as the model sees it.
	Text string
	// Result is the server's result.
	Result *sdkmcp.CallToolResult
}

// Error returns the result's text, which is what the model sees.
func (e *ToolError) Error() string {
	if e.Text == "" {
		return "the tool reported an error without a message"
	}
	return e.Text
}

// tool is one MCP tool as a runlet.Tool.
type tool struct {
	src     caller
	mcpName string
	shown   string // mcpName as errors show it
	spec    runlet.ToolSpec
	policy  runlet.ToolPolicy
	timeout time.Duration // Limits.CallTimeout
	server  string
	// output validates the structured content of the tool's results,
	// when it declares an output schema
	output *jsonschema.Resolved
}

func (t *tool) Spec() runlet.ToolSpec { return t.spec }

// Policy returns the policy set with WithPolicy.
var _ runlet.PolicyTool = (*tool)(nil)

func (t *tool) Policy() runlet.ToolPolicy { return t.policy }

func (t *tool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	res, err := t.call(ctx, args)
	if err != nil {
		return "", err
	}
	text, err := resultText(res)
	if err != nil {
		return "", fmt.Errorf("mcp: tool %s: %w", t.shown, err)
	}
	return text, nil
}

// call sends tools/call and returns the result of a call that did not
// fail: the result is checked against the tool's output schema; an
// isError result is a *ToolError.
func (t *tool) call(ctx context.Context, args json.RawMessage) (*sdkmcp.CallToolResult, error) {
	params := &sdkmcp.CallToolParams{Name: t.mcpName}
	if a := strings.TrimSpace(string(args)); a != "" && a != "null" {
		if !json.Valid(args) {
			return nil, errors.New("the arguments are not valid JSON")
		}
		params.Arguments = args
	}
	callCtx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel() // also ends what the transport still reads for the call
	res, err := t.src.callTool(callCtx, params)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if callCtx.Err() != nil {
			return nil, &LimitError{Server: t.server, Limit: "CallTimeout", Value: int64(t.timeout)}
		}
		var ce *callError
		var le *LimitError
		var ae *AuthError
		if errors.As(err, &ce) || errors.As(err, &le) || errors.As(err, &ae) {
			return nil, err
		}
		return nil, fmt.Errorf("mcp: calling %s: %w", t.shown, err)
	}
	if res == nil {
		return nil, fmt.Errorf("mcp: calling %s: empty result", t.shown)
	}
	if res.NeedsInput() {
		return nil, fmt.Errorf("mcp: tool %s needs input from the client that this client cannot give", t.shown)
	}
	if res.IsError {
		text, err := resultText(res)
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %s: %w", t.shown, err)
		}
		return nil, &ToolError{Tool: t.mcpName, Text: text, Result: res}
	}
	if err := t.checkStructured(res); err != nil {
		return nil, err
	}
	return res, nil
}

// resultText renders a result's content as text, for a caller that wants
// text only (Call): images, audio and resources summarised.
func resultText(res *sdkmcp.CallToolResult) (string, error) {
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*sdkmcp.TextContent); ok {
			return tc.Text, nil
		}
	}
	var b strings.Builder
	hasText := false
	for i, c := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		if _, ok := c.(*sdkmcp.TextContent); ok {
			hasText = true
		}
		writeContent(&b, c)
	}
	if !hasText && res.StructuredContent != nil {
		j, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return "", fmt.Errorf("encoding structured content: %w", err)
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(j)
	}
	return b.String(), nil
}

// writeContent writes one content block: text as is, anything else as a
// short bracketed summary.
func writeContent(b *strings.Builder, c sdkmcp.Content) {
	switch c := c.(type) {
	case *sdkmcp.TextContent:
		b.WriteString(c.Text)
	case *sdkmcp.ImageContent:
		fmt.Fprintf(b, "[image %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *sdkmcp.AudioContent:
		fmt.Fprintf(b, "[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *sdkmcp.ResourceLink:
		fmt.Fprintf(b, "[resource link %s: %s]", c.Name, c.URI)
	case *sdkmcp.EmbeddedResource:
		r := c.Resource
		switch {
		case r == nil:
			b.WriteString("[resource]")
		case r.Blob != nil:
			fmt.Fprintf(b, "[resource %s %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
		default:
			fmt.Fprintf(b, "[resource %s]\n%s", r.URI, r.Text)
		}
	default:
		typ := "unknown"
		if raw, err := c.MarshalJSON(); err == nil {
			var w struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(raw, &w) == nil && w.Type != "" {
				typ = w.Type
			}
		}
		fmt.Fprintf(b, "[%s content]", typ)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}

// inputSchema converts the schema a client session holds (the server's
// JSON, decoded as a map) into a jsonschema.Schema, refusing one larger
// than limit bytes as JSON. A tool without one takes an object.
func inputSchema(v any, limit int) (*jsonschema.Schema, error) {
	if v == nil {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%d bytes, more than Limits.MaxSchemaBytes (%d)", len(b), limit)
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, err
	}
	return s, nil
}

// maxShownName bounds a server's or tool's name as logs and errors show it.
const maxShownName = 128

// cleanText is s made safe to show a model, a log or a terminal: valid
// UTF-8 (an invalid byte becomes U+FFFD), without control characters other
// than newline and tab or the Unicode controls that reorder text, and at
// most max bytes (cut at a character, ending in "…").
func cleanText(s string, limit int) string {
	if len(s) <= limit && utf8.ValidString(s) && !strings.ContainsFunc(s, hiddenRune) {
		return s
	}
	clean := strings.Map(func(r rune) rune {
		if hiddenRune(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(clean) <= limit {
		return clean
	}
	cut := max(limit-len("…"), 0)
	for cut > 0 && !utf8.RuneStart(clean[cut]) {
		cut--
	}
	return clean[:cut] + "…"
}

// hiddenRune reports whether r is a control character other than newline
// and tab, or a Unicode bidirectional control (which can make text read
// otherwise than it is).
func hiddenRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// toolName is the runlet name of an MCP tool: prefix plus the sanitised
// name, at most MaxNameLen bytes (see the package doc).
func toolName(prefix, name string) string { return toolname.Make(prefix, name, "tool") }

// sanitize replaces every character outside [a-zA-Z0-9_-] with '_', as
// every tool name of this module is made (internal/toolname).
func sanitize(s string) string { return toolname.Sanitize(s) }
