package uistream

import (
	"cmp"
	"encoding/base64"

	"github.com/runlet/runlet"
)

// Parts, citations and hosted tools as AG-UI carries them.

// aguiOutPart is a content part of a TOOL_CALL_RESULT: a text, or an
// image, document or audio part with its source.
type aguiOutPart struct {
	Type   string      `json:"type"`
	Text   *string     `json:"text,omitempty"`
	Source *aguiSource `json:"source,omitempty"`
}

// aguiResultContent is a tool result's content: its text when it has no
// parts, else its parts in order.
func aguiResultContent(res runlet.ToolResultPart) any {
	if len(res.Parts) == 0 {
		return res.Content
	}
	out := make([]aguiOutPart, 0, len(res.Parts))
	for _, p := range res.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			out = append(out, aguiOutPart{Type: "text", Text: &p.Text})
		case runlet.ImagePart:
			out = append(out, aguiMedia("image", p.URL, p.MediaType, p.Data))
		case runlet.FilePart:
			out = append(out, aguiMedia("document", p.URL, p.MediaType, p.Data))
		case runlet.AudioPart:
			out = append(out, aguiMedia("audio", p.URL, p.MediaType, p.Data))
		}
	}
	return out
}

func aguiMedia(typ, url, mediaType string, data []byte) aguiOutPart {
	if url != "" {
		return aguiOutPart{Type: typ, Source: &aguiSource{Type: "url", Value: url, MimeType: mediaType}}
	}
	// An inline source needs its media type.
	return aguiOutPart{Type: typ, Source: &aguiSource{Type: "data", Value: base64.StdEncoding.EncodeToString(data),
		MimeType: cmp.Or(mediaType, "application/octet-stream")}}
}

// aguiCitation is a citation as the page gets it: without the provider's
// own object (Raw), which is continuation state for the provider.
type aguiCitation struct {
	URL       string `json:"url,omitempty"`
	Title     string `json:"title,omitempty"`
	FileID    string `json:"fileId,omitempty"`
	CitedText string `json:"citedText,omitempty"`
	Start     int    `json:"start,omitempty"`
	End       int    `json:"end,omitempty"`
}

func aguiCitations(cs []runlet.Citation) []aguiCitation {
	out := make([]aguiCitation, 0, len(cs))
	for _, c := range cs {
		out = append(out, aguiCitation{URL: c.URL, Title: c.Title, FileID: c.FileID, CitedText: c.CitedText, Start: c.Start, End: c.End})
	}
	return out
}

// aguiHostedTool is the value of a "runlet.hosted_tool" CUSTOM event: what
// a provider-hosted tool did, without the provider's items (Raw).
type aguiHostedTool struct {
	ID      string         `json:"id,omitempty"`
	Kind    string         `json:"kind,omitempty"`
	Name    string         `json:"name,omitempty"`
	Input   any            `json:"input,omitempty"`
	Output  string         `json:"output,omitempty"`
	Sources []aguiCitation `json:"sources,omitempty"`
	IsError bool           `json:"isError,omitempty"`
}

func aguiHosted(p runlet.HostedToolPart) aguiHostedTool {
	h := aguiHostedTool{ID: p.ID, Kind: string(p.Kind), Name: p.Name, Output: p.Output, IsError: p.IsError}
	if len(p.Input) > 0 {
		h.Input = jsonValue(p.Input)
	}
	if len(p.Sources) > 0 {
		h.Sources = aguiCitations(p.Sources)
	}
	return h
}
