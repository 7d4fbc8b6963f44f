package runlet

// What JSONLObserver writes of images, files and audio: a summary (kind,
// media type, size, SHA-256), never their bytes.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// mediaSummary stands for an image, file or audio part in what
// JSONLObserver writes.
type mediaSummary struct {
	kind      string // the part's JSON type
	Name      string `json:"name,omitempty"`
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Bytes     int    `json:"bytes"`
	SHA256    string `json:"sha256,omitempty"`
}

func (m mediaSummary) partType() string { return m.kind }

// summarize returns p as a summary when it carries bytes (inline data or
// a data: URL), else p.
func summarize(p Part) (Part, bool) {
	var name, url, mt string
	var data []byte
	switch q := p.(type) {
	case ImagePart:
		url, mt, data = q.URL, q.MediaType, q.Data
	case FilePart:
		name, url, mt, data = q.Name, q.URL, q.MediaType, q.Data
	case AudioPart:
		url, mt, data = q.URL, q.MediaType, q.Data
	case ToolResultPart:
		parts, ok := summarizeParts(q.Parts)
		q.Parts = parts
		return q, ok
	default:
		return p, false
	}
	if strings.HasPrefix(url, "data:") {
		data, url = []byte(url), ""
	}
	if len(data) == 0 {
		return p, false
	}
	sum := sha256.Sum256(data)
	return mediaSummary{kind: p.partType(), Name: name, URL: url, MediaType: mt, Bytes: len(data), SHA256: hex.EncodeToString(sum[:])}, true
}

// summarizeParts returns parts with their media summarised, and whether
// any was; parts itself when none was.
func summarizeParts(parts []Part) ([]Part, bool) {
	var out []Part
	for i, p := range parts {
		s, ok := summarize(p)
		if !ok {
			if out != nil {
				out[i] = p
			}
			continue
		}
		if out == nil {
			out = make([]Part, len(parts))
			copy(out, parts[:i])
		}
		out[i] = s
	}
	if out == nil {
		return parts, false
	}
	return out, true
}

func summarizeMessages(msgs []Message) ([]Message, bool) {
	var out []Message
	for i, m := range msgs {
		parts, ok := summarizeParts(m.Parts)
		if !ok {
			if out != nil {
				out[i] = m
			}
			continue
		}
		if out == nil {
			out = make([]Message, len(msgs))
			copy(out, msgs[:i])
		}
		out[i] = Message{Role: m.Role, Parts: parts}
	}
	if out == nil {
		return msgs, false
	}
	return out, true
}

func summarizeResult(r *Result) *Result {
	if r == nil {
		return nil
	}
	if msgs, ok := summarizeMessages(r.Messages); ok {
		c := *r
		c.Messages = msgs
		return &c
	}
	return r
}

// summarizeEvent returns ev with the bytes of its images, files and audio
// replaced by summaries: a copy when it has any, else ev.
func summarizeEvent(ev Event) Event {
	switch e := ev.(type) {
	case *RunStarted:
		if msgs, ok := summarizeMessages(e.Input); ok {
			c := *e
			c.Input = msgs
			return &c
		}
	case *AgentStarted:
		if msgs, ok := summarizeMessages(e.Input); ok {
			c := *e
			c.Input = msgs
			return &c
		}
	case *ModelStarted:
		if e.Request != nil {
			if msgs, ok := summarizeMessages(e.Request.Messages); ok {
				c, req := *e, *e.Request
				req.Messages = msgs
				c.Request = &req
				return &c
			}
		}
	case *ModelFinished:
		if e.Response != nil {
			if parts, ok := summarizeParts(e.Response.Message.Parts); ok {
				c, resp := *e, *e.Response
				resp.Message.Parts = parts
				c.Response = &resp
				return &c
			}
		}
	case *ToolFinished:
		if parts, ok := summarizeParts(e.Result.Parts); ok {
			c := *e
			c.Result.Parts = parts
			return &c
		}
	case *RunFinished:
		c := *e
		c.Result = summarizeResult(e.Result)
		return &c
	case *RunInterrupted:
		c := *e
		c.Result = summarizeResult(e.Result)
		return &c
	case *RunFailed:
		c := *e
		c.Result = summarizeResult(e.Result)
		return &c
	case *AgentFinished:
		c := *e
		c.Result = summarizeResult(e.Result)
		return &c
	}
	return ev
}

// partsSummary is a result's media as the slog observer shows them:
// "image image/png 1234 bytes, file application/pdf 5678 bytes".
func partsSummary(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		n := mediaBytes(p)
		if n == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s %d bytes", p.partType(), mediaName(p), n)
	}
	return b.String()
}
