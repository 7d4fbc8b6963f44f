package mcp

// A tool result's content as runlet parts (CallParts), and the output
// schema its structured content is checked against.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
)

var _ runlet.PartsTool = (*tool)(nil)

// CallParts is Call returning the result's content as parts (see the
// package documentation): a run calls it, so the model gets the server's
// images, audio and resources themselves, not their summaries.
func (t *tool) CallParts(ctx context.Context, args json.RawMessage) (runlet.ToolOutput, error) {
	res, err := t.call(ctx, args)
	if err != nil {
		return runlet.ToolOutput{}, err
	}
	out, err := resultOutput(res)
	if err != nil {
		return runlet.ToolOutput{}, fmt.Errorf("mcp: tool %s: %w", t.shown, err)
	}
	return out, nil
}

// resultOutput converts a result's content to parts, in order: text as
// text, images and audio as ImagePart and AudioPart, an embedded blob
// resource as the part its MIME type says (image, audio, else a file), an
// embedded text resource as text headed by its URI, a resource link to an
// http(s) URL as an image or file by URL (any other link, which a provider
// cannot fetch, as a line of text naming it); structuredContent becomes
// the output's structured value.
func resultOutput(res *sdkmcp.CallToolResult) (runlet.ToolOutput, error) {
	var out runlet.ToolOutput
	for _, c := range res.Content {
		p := contentPart(c)
		if t, ok := p.(runlet.TextPart); ok && len(out.Parts) > 0 {
			t.Text = "\n" + t.Text // blocks are lines, as Call joins them
			p = t
		}
		out.Parts = append(out.Parts, p)
	}
	if res.StructuredContent != nil {
		j, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return runlet.ToolOutput{}, fmt.Errorf("encoding structured content: %w", err)
		}
		out.Structured = json.RawMessage(j)
	}
	return out, nil
}

// contentPart is one content block as a part.
func contentPart(c sdkmcp.Content) runlet.Part {
	switch c := c.(type) {
	case *sdkmcp.TextContent:
		return runlet.Text(c.Text)
	case *sdkmcp.ImageContent:
		return runlet.Image(mediaType(c.MIMEType, c.Data), c.Data)
	case *sdkmcp.AudioContent:
		return runlet.Audio(mediaType(c.MIMEType, c.Data), c.Data)
	case *sdkmcp.EmbeddedResource:
		if r := c.Resource; r != nil && r.Blob != nil {
			return blobPart(r.URI, mediaType(r.MIMEType, r.Blob), r.Blob)
		}
	case *sdkmcp.ResourceLink:
		if u := strings.ToLower(c.URI); strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
			if strings.HasPrefix(c.MIMEType, "image/") {
				return runlet.ImagePart{URL: c.URI, MediaType: c.MIMEType}
			}
			return runlet.FilePart{Name: c.Name, URL: c.URI, MediaType: c.MIMEType}
		}
	}
	var b strings.Builder
	writeContent(&b, c)
	return runlet.Text(b.String())
}

// blobPart is binary data of mediaType as the matching part.
func blobPart(uri, mediaType string, data []byte) runlet.Part {
	switch {
	case strings.HasPrefix(mediaType, "image/"):
		return runlet.Image(mediaType, data)
	case strings.HasPrefix(mediaType, "audio/"):
		return runlet.Audio(mediaType, data)
	}
	return runlet.File(path.Base(uri), mediaType, data)
}

// mediaType is mime, or when the server sent none, what the data looks
// like.
func mediaType(mime string, data []byte) string {
	if mime != "" || len(data) == 0 {
		return mime
	}
	return http.DetectContentType(data)
}

// outputSchema resolves a tool's output schema.
func outputSchema(v any, limit int) (*jsonschema.Resolved, error) {
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
	return s.Resolve(nil)
}

// checkStructured holds a result to the tool's output schema, as the MCP
// specification asks of a client: a tool that declares one must return
// structured content, and that content must match it.
func (t *tool) checkStructured(res *sdkmcp.CallToolResult) error {
	if t.output == nil {
		return nil
	}
	if res.StructuredContent == nil {
		return fmt.Errorf("mcp: tool %s declares an output schema but returned no structured content", t.shown)
	}
	j, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return fmt.Errorf("mcp: tool %s: encoding structured content: %w", t.shown, err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return fmt.Errorf("mcp: tool %s: structured content: %w", t.shown, err)
	}
	if err := t.output.Validate(v); err != nil {
		return fmt.Errorf("mcp: tool %s: the structured content does not match its output schema: %w", t.shown, err)
	}
	return nil
}

// mcpContent is parts as MCP content blocks, for a runlet tool or agent
// served over MCP: text as text, inline images and audio as image and
// audio content, an inline file as an embedded resource (text for a text/*
// file, else a blob), and an image, file or audio by URL as a resource
// link. Its URI names an embedded file for the client: "runlet:" and the
// file's name.
func mcpContent(parts []runlet.Part) []sdkmcp.Content {
	out := make([]sdkmcp.Content, 0, len(parts))
	for _, p := range parts {
		switch p := p.(type) {
		case runlet.TextPart:
			out = append(out, &sdkmcp.TextContent{Text: p.Text})
		case runlet.ImagePart:
			if p.URL != "" {
				out = append(out, &sdkmcp.ResourceLink{Name: path.Base(p.URL), URI: p.URL, MIMEType: p.MediaType})
				continue
			}
			out = append(out, &sdkmcp.ImageContent{MIMEType: p.MediaType, Data: p.Data})
		case runlet.AudioPart:
			if p.URL != "" {
				out = append(out, &sdkmcp.ResourceLink{Name: path.Base(p.URL), URI: p.URL, MIMEType: p.MediaType})
				continue
			}
			out = append(out, &sdkmcp.AudioContent{MIMEType: p.MediaType, Data: p.Data})
		case runlet.FilePart:
			name := p.Name
			if p.URL != "" {
				if name == "" {
					name = path.Base(p.URL)
				}
				out = append(out, &sdkmcp.ResourceLink{Name: name, URI: p.URL, MIMEType: p.MediaType})
				continue
			}
			if name == "" {
				name = "file"
			}
			r := &sdkmcp.ResourceContents{URI: "runlet:" + name, MIMEType: p.MediaType}
			if strings.HasPrefix(p.MediaType, "text/") {
				r.Text = string(p.Data)
			} else {
				r.Blob = p.Data
			}
			out = append(out, &sdkmcp.EmbeddedResource{Resource: r})
		}
	}
	return out
}

// servedResult is a tool result as an MCP result: its parts as content
// (its text when it has none) and its structured value as
// structuredContent.
func servedResult(res runlet.ToolResultPart) *sdkmcp.CallToolResult {
	out := textResult(res.Content)
	if res.Parts != nil {
		out.Content = mcpContent(res.Parts)
		if !hasText(res.Parts) && res.Content != "" {
			// a structured value's JSON: the text MCP asks to go with it
			out.Content = append([]sdkmcp.Content{&sdkmcp.TextContent{Text: res.Content}}, out.Content...)
		}
	}
	if len(res.Structured) > 0 && json.Valid(res.Structured) {
		out.StructuredContent = json.RawMessage(res.Structured)
	}
	out.IsError = res.IsError
	return out
}

func hasText(parts []runlet.Part) bool {
	for _, p := range parts {
		if _, ok := p.(runlet.TextPart); ok {
			return true
		}
	}
	return false
}

// answerContent is the content of an agent's answer: the parts of its
// final message when they hold more than text, else its text.
func answerContent(res *runlet.Result) []sdkmcp.Content {
	for i := len(res.Messages) - 1; i >= 0; i-- {
		m := res.Messages[i]
		if m.Role != runlet.RoleAssistant {
			continue
		}
		media := false
		var parts []runlet.Part
		for _, p := range m.Parts {
			switch p := p.(type) {
			case runlet.TextPart:
				parts = append(parts, runlet.Text(p.Text))
			case runlet.ImagePart, runlet.FilePart, runlet.AudioPart:
				parts = append(parts, p)
				media = true
			}
		}
		if media {
			return mcpContent(parts)
		}
		break
	}
	return []sdkmcp.Content{&sdkmcp.TextContent{Text: res.Output}}
}
