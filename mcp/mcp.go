package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
)

// MaxNameLen is the longest tool name Tools produces: what OpenAI accepts.
const MaxNameLen = 64

// Option configures [Tools] and [Connect].
type Option func(*config)

type config struct {
	prefix string
	filter func(*sdkmcp.Tool) bool
	policy func(*sdkmcp.Tool) runlet.ToolPolicy

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
// pagination, and returns them as runlet tools calling the server through
// session. The session must stay open while the tools are in use. The list
// is a snapshot; [Connect] gives a [Toolset] that follows changes and
// reconnects.
func Tools(ctx context.Context, session *sdkmcp.ClientSession, opts ...Option) ([]runlet.Tool, error) {
	if session == nil {
		return nil, errors.New("mcp: nil session")
	}
	c := newConfig(opts)
	tools, _, err := listTools(ctx, session, &c, sessionCaller{session})
	return tools, err
}

func newConfig(opts []Option) config {
	c := config{attempts: 3, backoff: 200 * time.Millisecond}
	for _, o := range opts {
		o(&c)
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

// listTools lists the server's tools as runlet tools calling through
// src, and the set of their MCP names.
func listTools(ctx context.Context, session *sdkmcp.ClientSession, c *config, src caller) ([]runlet.Tool, map[string]bool, error) {
	prefix := sanitize(c.prefix)
	var tools []runlet.Tool
	byName := make(map[string]string) // runlet name -> MCP name
	mcpNames := make(map[string]bool)
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("mcp: listing tools: %w", err)
		}
		if t == nil || (c.filter != nil && !c.filter(t)) {
			continue
		}
		name := toolName(prefix, t.Name)
		if prev, ok := byName[name]; ok {
			return nil, nil, fmt.Errorf("mcp: tools %q and %q both become %q; drop one with WithFilter", prev, t.Name, name)
		}
		byName[name] = t.Name
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			return nil, nil, fmt.Errorf("mcp: tool %q: input schema: %w", t.Name, err)
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		mt := &tool{
			src:     src,
			mcpName: t.Name,
			spec:    runlet.ToolSpec{Name: name, Description: desc, InputSchema: schema},
		}
		if c.policy != nil {
			mt.policy = c.policy(t)
		}
		tools = append(tools, mt)
		mcpNames[t.Name] = true
	}
	return tools, mcpNames, nil
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
	spec    runlet.ToolSpec
	policy  runlet.ToolPolicy
}

func (t *tool) Spec() runlet.ToolSpec { return t.spec }

// Policy returns the policy set with WithPolicy.
func (t *tool) Policy() runlet.ToolPolicy { return t.policy }

func (t *tool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	params := &sdkmcp.CallToolParams{Name: t.mcpName}
	if a := strings.TrimSpace(string(args)); a != "" && a != "null" {
		if !json.Valid(args) {
			return "", errors.New("the arguments are not valid JSON")
		}
		params.Arguments = args
	}
	res, err := t.src.callTool(ctx, params)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", ctxErr
		}
		var ce *callError
		if errors.As(err, &ce) {
			return "", err
		}
		return "", fmt.Errorf("mcp: calling %s: %w", t.mcpName, err)
	}
	if res == nil {
		return "", fmt.Errorf("mcp: calling %s: empty result", t.mcpName)
	}
	if res.NeedsInput() {
		return "", fmt.Errorf("mcp: tool %s needs input from the client that this client cannot give", t.mcpName)
	}
	text, err := resultText(res)
	if err != nil {
		return "", fmt.Errorf("mcp: tool %s: %w", t.mcpName, err)
	}
	if res.IsError {
		return "", &ToolError{Tool: t.mcpName, Text: text, Result: res}
	}
	return text, nil
}

// resultText renders a result's content as the text the model sees.
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
// JSON, decoded as a map) into a jsonschema.Schema. A tool without one
// takes an object.
func inputSchema(v any) (*jsonschema.Schema, error) {
	if v == nil {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	if s, ok := v.(*jsonschema.Schema); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, err
	}
	return s, nil
}

// toolName is the runlet name of an MCP tool: prefix plus the sanitised
// name, at most MaxNameLen bytes (see the package doc).
func toolName(prefix, name string) string {
	n := prefix + sanitize(name)
	if n == "" {
		n = "tool"
	}
	if len(n) <= MaxNameLen {
		return n
	}
	h := fnv.New32a()
	h.Write([]byte(prefix))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return fmt.Sprintf("%s_%08x", n[:MaxNameLen-9], h.Sum32())
}

// sanitize replaces every byte outside [a-zA-Z0-9_-] with '_' (one '_' per
// rune).
func sanitize(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && nameByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
