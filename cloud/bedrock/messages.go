package bedrock

import (
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
		text := p.Content
		if text == "" {
			text = " " // the API refuses an empty result's text
		}
		r := &wireToolResult{ToolUseID: toolID(p.CallID), Content: []wireResultContent{{Text: &text}}}
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
	}
	return wireBlock{}, false, fmt.Errorf("unsupported part %T", p)
}

// image encodes an image: inline bytes (or a data: URL) as bytes, an s3://
// URL by reference. Bedrock fetches no https URL.
func image(p runlet.ImagePart) (*wireImage, error) {
	src, mt, err := source(p.URL, p.MediaType, p.Data, "image")
	if err != nil {
		return nil, err
	}
	if mt == "" {
		mt = mediaTypeFromName(p.URL)
	}
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
	if mt == "" || mt == "application/octet-stream" {
		if byName := mediaTypeFromName(p.Name); byName != "" {
			mt = byName
		} else if byURL := mediaTypeFromName(p.URL); byURL != "" {
			mt = byURL
		}
	}
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
		if mediaType == "" {
			mediaType = http.DetectContentType(data)
		}
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
