// Package mcp turns the tools of an MCP (Model Context Protocol) server into
// runlet tools, using the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// Connect to a server with the SDK, then hand the session to [Tools]:
//
//	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "my-app", Version: "v1.0.0"}, nil)
//	session, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: exec.Command("my-server")}, nil)
//	if err != nil { ... }
//	defer session.Close()
//	tools, err := mcp.Tools(ctx, session, mcp.WithPrefix("files_"))
//	agent := &runlet.Agent{Model: m, Tools: tools}
//
// Each tool's spec comes from the server: its name (see below), its
// description (or title, when it has no description) and its input schema.
// A call sends tools/call with the model's JSON arguments and gives the model
// the result as text:
//
//   - text content as is, several content blocks joined by newlines;
//   - other content summarised, such as "[image image/png, 1234 bytes]" or
//     "[resource link report.pdf: file:///tmp/report.pdf]"; an embedded text
//     resource is shown with its text;
//   - structured content as JSON when there is no text content.
//
// A result the server marks isError becomes a [*ToolError] whose message is
// that text, so the runtime gives the model an is-error tool result and the
// model can correct itself. A protocol failure (unknown tool, closed
// connection, ...) is returned as an error too. Cancelling the call's context
// cancels the request on the server (the SDK sends notifications/cancelled)
// and Call returns at once.
//
// # Tool names
//
// MCP allows tool names of up to 128 characters with dots, while model
// providers are stricter: OpenAI requires ^[a-zA-Z0-9_-]{1,64}$, and
// others have similar rules. So the runlet name is the prefix (see [WithPrefix])
// plus the MCP name with every other character replaced by '_', and a name
// longer than 64 bytes is cut to 55 and ends in '_' and 8 hex digits of a
// hash of the full name, which keeps long names distinct. The MCP name is
// what is sent to the server. Two tools whose names become the same make
// [Tools] fail; drop one with [WithFilter].
//
// [Tools] is a snapshot: call it again to see tools the server added later
// (the SDK's ClientOptions.ToolListChangedHandler tells you when).
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
)

// MaxNameLen is the longest tool name Tools produces: what OpenAI accepts.
const MaxNameLen = 64

// Option configures [Tools].
type Option func(*config)

type config struct {
	prefix string
	filter func(*sdkmcp.Tool) bool
	policy func(*sdkmcp.Tool) runlet.ToolPolicy
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
// session. The session must stay open while the tools are in use.
func Tools(ctx context.Context, session *sdkmcp.ClientSession, opts ...Option) ([]runlet.Tool, error) {
	if session == nil {
		return nil, errors.New("mcp: nil session")
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	prefix := sanitize(c.prefix)
	var tools []runlet.Tool
	byName := make(map[string]string) // runlet name -> MCP name
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp: listing tools: %w", err)
		}
		if t == nil || (c.filter != nil && !c.filter(t)) {
			continue
		}
		name := toolName(prefix, t.Name)
		if prev, ok := byName[name]; ok {
			return nil, fmt.Errorf("mcp: tools %q and %q both become %q; drop one with WithFilter", prev, t.Name, name)
		}
		byName[name] = t.Name
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %q: input schema: %w", t.Name, err)
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		mt := &tool{
			session: session,
			mcpName: t.Name,
			spec:    runlet.ToolSpec{Name: name, Description: desc, InputSchema: schema},
		}
		if c.policy != nil {
			mt.policy = c.policy(t)
		}
		tools = append(tools, mt)
	}
	return tools, nil
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
	session *sdkmcp.ClientSession
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
	res, err := t.session.CallTool(ctx, params)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", ctxErr
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
