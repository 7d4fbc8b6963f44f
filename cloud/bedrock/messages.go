package bedrock

import (
	"cmp"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
	"github.com/runlet/runlet/internal/wirejson"
)

// encodeMessages turns the history into Converse messages: user and tool
// messages are "user" messages, assistant messages "assistant" messages,
// consecutive messages with the same role merged (the API wants them
// alternating), tool results first in their user message.
func (m *Model) encodeMessages(in []runlet.Message) ([]wireMessage, error) {
	out := make([]wireMessage, 0, len(in))
	docs := 0
	for i, msg := range in {
		role := "user"
		if msg.Role == runlet.RoleAssistant {
			role = "assistant"
		}
		var blocks []wireBlock
		for _, p := range msg.Parts {
			b, ok, err := m.encodePart(p, role, &docs)
			if err != nil {
				return nil, m.invalid(fmt.Sprintf("message %d", i), err)
			}
			if ok {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
		} else {
			out = append(out, wireMessage{Role: role, Content: blocks})
		}
	}
	for i := range out {
		if out[i].Role == "user" {
			results := out[i].Content[:0:0]
			other := make([]wireBlock, 0, len(out[i].Content))
			for _, b := range out[i].Content {
				if b.ToolResult != nil {
					results = append(results, b)
				} else {
					other = append(other, b)
				}
			}
			if len(results) > 0 && len(other) > 0 {
				out[i].Content = append(results, other...)
			}
		}
	}
	return out, nil
}

// encodePart encodes one part; ok is false for a part that is not sent
// (empty text, reasoning another provider made).
func (m *Model) encodePart(p runlet.Part, role string, docs *int) (wireBlock, bool, error) {
	switch p := p.(type) {
	case runlet.TextPart:
		if strings.TrimSpace(p.Text) == "" { // the API refuses blank text blocks
			return wireBlock{}, false, nil
		}
		text := p.Text
		return wireBlock{Text: &text}, true, nil
	case runlet.ReasoningPart:
		if role != "assistant" || p.Provider != m.cfg.name {
			return wireBlock{}, false, nil
		}
		switch {
		case p.Signature != "":
			return wireBlock{ReasoningContent: &wireReasoning{ReasoningText: &wireReasoningText{Text: p.Text, Signature: p.Signature}}}, true, nil
		case p.Encrypted != "":
			return wireBlock{ReasoningContent: &wireReasoning{RedactedContent: p.Encrypted}}, true, nil
		}
		return wireBlock{}, false, nil
	case runlet.ToolCallPart:
		return wireBlock{ToolUse: &wireToolUse{ToolUseID: toolID(p.ID), Name: p.Name, Input: wirejson.Object(p.Arguments)}}, true, nil
	case runlet.ToolResultPart:
		content, err := resultContent(p, docs)
		if err != nil {
			return wireBlock{}, false, err
		}
		r := &wireToolResult{ToolUseID: toolID(p.CallID), Content: content}
		if p.IsError {
			r.Status = "error"
		}
		return wireBlock{ToolResult: r}, true, nil
	case runlet.ImagePart:
		img, err := image(p)
		if err != nil {
			return wireBlock{}, false, err
		}
		return wireBlock{Image: img}, true, nil
	case runlet.FilePart:
		*docs++
		doc, err := document(p, *docs)
		if err != nil {
			return wireBlock{}, false, err
		}
		return wireBlock{Document: doc}, true, nil
	case runlet.HostedToolPart:
		// Another provider's hosted tool (Converse has none): what it did,
		// as text.
		text := p.Text()
		return wireBlock{Text: &text}, true, nil
	}
	return wireBlock{}, false, fmt.Errorf("unsupported part %T", p)
}

// resultContent is a tool result's content: its text, or, when the tool
// returned parts, each in order: text, images and documents natively (as
// toolResult content blocks), audio as a note, since a tool result takes
// none.
func resultContent(p runlet.ToolResultPart, docs *int) ([]wireResultContent, error) {
	text := func(s string) wireResultContent { return wireResultContent{Text: &s} }
	if len(p.Parts) == 0 {
		if p.Content == "" {
			return []wireResultContent{text(" ")}, nil // the API refuses an empty text
		}
		return []wireResultContent{text(p.Content)}, nil
	}
	out := make([]wireResultContent, 0, len(p.Parts))
	for _, part := range p.Parts {
		switch part := part.(type) {
		case runlet.TextPart:
			if strings.TrimSpace(part.Text) != "" {
				out = append(out, text(part.Text))
			}
		case runlet.ImagePart:
			img, err := image(part)
			if err != nil {
				return nil, err
			}
			out = append(out, wireResultContent{Image: img})
		case runlet.FilePart:
			*docs++
			doc, err := document(part, *docs)
			if err != nil {
				return nil, err
			}
			out = append(out, wireResultContent{Document: doc})
		case runlet.AudioPart:
			out = append(out, text("[audio not sent: Bedrock tool results take text, images and documents]"))
		default:
			return nil, fmt.Errorf("tool result part %T", part)
		}
	}
	if len(out) == 0 {
		out = append(out, text(" "))
	}
	return out, nil
}

// image encodes an image: inline bytes (or a data: URL) as bytes, an s3://
// URL by reference. Bedrock fetches no https URL.
func image(p runlet.ImagePart) (*wireImage, error) {
	src, mt, err := source(p.URL, p.MediaType, p.Data, "image")
	if err != nil {
		return nil, err
	}
	mt = cmp.Or(mt, mediaTypeFromName(p.URL), sniff(p.Data, p.URL))
	format := strings.TrimPrefix(mt, "image/")
	switch format {
	case "png", "jpeg", "gif", "webp":
	case "jpg":
		format = "jpeg"
	default:
		return nil, fmt.Errorf("image of type %q: Bedrock takes png, jpeg, gif and webp", mt)
	}
	return &wireImage{Format: format, Source: src}, nil
}

// documentFormats maps media types to Converse document formats.
var documentFormats = map[string]string{
	"application/pdf":    "pdf",
	"text/csv":           "csv",
	"application/msword": "doc",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/vnd.ms-excel": "xls",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
	"text/html":     "html",
	"text/plain":    "txt",
	"text/markdown": "md",
}

// document encodes a file: bytes or an s3:// URL, its format from its
// media type or name, its name fitted to the API's rules.
func document(p runlet.FilePart, n int) (*wireDocument, error) {
	src, mt, err := source(p.URL, p.MediaType, p.Data, "document")
	if err != nil {
		return nil, err
	}
	if mt == "application/octet-stream" {
		mt = ""
	}
	mt = cmp.Or(mt, mediaTypeFromName(p.Name), mediaTypeFromName(p.URL), sniff(p.Data, p.URL))
	format, ok := documentFormats[mt]
	if !ok && strings.HasPrefix(mt, "text/") {
		format, ok = "txt", true
	}
	if !ok {
		return nil, fmt.Errorf("document of type %q: Bedrock takes pdf, csv, doc, docx, xls, xlsx, html, txt and md", mt)
	}
	return &wireDocument{Format: format, Name: documentName(p.Name, n), Source: src}, nil
}

// source is an image's or document's bytes or S3 location, and its media
// type (parameters dropped, sniffed from bytes when not given).
func source(u, mediaType string, data []byte, what string) (wireSource, string, error) {
	if mt, d, ok := dataurl.Inline(u, mediaType, data); ok {
		mediaType, data = mt, d
	}
	if len(data) > 0 {
		return wireSource{Bytes: blob(data)}, dataurl.MediaType(mediaType), nil
	}
	if strings.HasPrefix(strings.ToLower(u), "s3://") {
		return wireSource{S3Location: &wireS3{URI: u}}, dataurl.MediaType(mediaType), nil
	}
	if u == "" {
		return wireSource{}, "", fmt.Errorf("%s without data or URL", what)
	}
	return wireSource{}, "", fmt.Errorf("%s by URL %q: Bedrock takes bytes or an s3:// URI, not a URL to fetch", what, redactURL(u))
}

// sniff is the media type of inline bytes (a part's Data, or a data:
// URL's), as net/http detects it, without parameters; "" for none.
func sniff(data []byte, u string) string {
	if len(data) == 0 {
		if _, d, ok := dataurl.Parse(u); ok {
			data = d
		}
	}
	if len(data) == 0 {
		return ""
	}
	return dataurl.MediaType(http.DetectContentType(data))
}

// mediaTypeFromName guesses a media type from a file name's extension.
func mediaTypeFromName(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".pdf":
		return "application/pdf"
	case ".csv":
		return "text/csv"
	case ".doc":
		return "application/msword"
	case ".docx":
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	case ".xls":
		return "application/vnd.ms-excel"
	case ".xlsx":
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	case ".html", ".htm":
		return "text/html"
	case ".txt":
		return "text/plain"
	case ".md":
		return "text/markdown"
	}
	return ""
}

// documentName fits a name to the API's: letters, digits, single spaces,
// hyphens, parentheses and square brackets, no extension needed. An empty
// name becomes "document-N".
func documentName(name string, n int) string {
	name = strings.TrimSuffix(path.Base(name), path.Ext(name))
	var b strings.Builder
	space := false
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '(' || r == ')' || r == '[' || r == ']'
		switch {
		case ok:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	if b.Len() == 0 || name == "." || name == "/" {
		return fmt.Sprintf("document-%d", n)
	}
	return b.String()
}

// redactURL shows a URL without its query or user info.
func redactURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "@"); i >= 0 {
		if j := strings.Index(u, "://"); j >= 0 && j < i {
			u = u[:j+3] + u[i+1:]
		}
	}
	return u
}
