package uistream

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
)

// What a run produces beyond text and function calls, in the chunks the
// protocol has for it: a tool result's images, files and audio as file
// chunks (file parts of the message), citations as source chunks, and
// provider-hosted tools (web search, code execution) as tool parts the
// provider executed.

// runletMeta is the providerMetadata this package puts on a chunk it
// derives from a tool's result, naming the call.
type runletMeta struct {
	Runlet struct {
		ToolCallID string `json:"toolCallId,omitempty"`
	} `json:"runlet"`
}

// resultFiles sends a tool result's media parts as file chunks, each
// naming the call in its providerMetadata. Inline bytes go as data: URLs.
func resultFiles(w *frameWriter, r runlet.ToolResultPart) error {
	for _, p := range r.Parts {
		var url, mt string
		var data []byte
		switch p := p.(type) {
		case runlet.ImagePart:
			url, mt, data = p.URL, p.MediaType, p.Data
		case runlet.FilePart:
			url, mt, data = p.URL, p.MediaType, p.Data
		case runlet.AudioPart:
			url, mt, data = p.URL, p.MediaType, p.Data
		default:
			continue
		}
		if len(data) > 0 {
			url = dataurl.Encode(mt, data)
			if mt == "" {
				mt, _, _ = dataurl.Parse(url)
			}
		}
		if url == "" {
			continue
		}
		if mt == "" {
			mt = "application/octet-stream"
		}
		var meta runletMeta
		meta.Runlet.ToolCallID = r.CallID
		if err := w.data(chunk{Type: "file", URL: url, MediaType: dataurl.MediaType(mt), ProviderMetadata: meta}); err != nil {
			return err
		}
	}
	return nil
}

// resultOutput is a tool result as the tool part's output: the structured
// value when the tool returned one, else its content (see toolOutput).
func resultOutput(r runlet.ToolResultPart) json.RawMessage {
	if len(r.Structured) > 0 && json.Valid(r.Structured) {
		return r.Structured
	}
	return toolOutput(r)
}

// sources sends citations as source-url chunks (source-document for a
// cited file), each source once per stream.
func (e *uiEncoder) sources(w *frameWriter, cs []runlet.Citation) error {
	for _, c := range cs {
		key := c.URL
		if key == "" {
			key = "file:" + c.FileID
		}
		if key == "file:" || e.sourceIDs[key] != "" {
			continue
		}
		if e.sourceIDs == nil {
			e.sourceIDs = make(map[string]string)
		}
		id := "src" + strconv.Itoa(len(e.sourceIDs)+1)
		e.sourceIDs[key] = id
		var ch chunk
		if c.URL != "" {
			ch = chunk{Type: "source-url", SourceID: id, URL: c.URL, Title: c.Title}
		} else {
			ch = chunk{Type: "source-document", SourceID: id, MediaType: "application/octet-stream",
				Title: cmpOr(c.Title, c.FileID), Filename: c.FileID}
		}
		if err := w.data(ch); err != nil {
			return err
		}
	}
	return nil
}

// hosted sends a provider-hosted tool's call and result as a tool part the
// provider executed, and its sources.
func (e *uiEncoder) hosted(w *frameWriter, p runlet.HostedToolPart) error {
	if err := e.closePart(w); err != nil {
		return err
	}
	e.hostedN++
	id := p.ID
	if id == "" {
		id = "hosted_" + strconv.Itoa(e.hostedN)
	}
	name := cmpOr(string(p.Kind), p.Name, "hosted_tool")
	var input any = json.RawMessage(`{}`)
	if len(p.Input) > 0 {
		input = jsonOrString(p.Input)
	}
	if err := w.data(chunk{Type: "tool-input-available", ToolCallID: id, ToolName: name, Input: input, Dynamic: true, ProviderExecuted: true}); err != nil {
		return err
	}
	if p.IsError {
		if err := w.data(chunk{Type: "tool-output-error", ToolCallID: id, ErrorText: textPtr(p.Output), Dynamic: true, ProviderExecuted: true}); err != nil {
			return err
		}
	} else {
		out, _ := json.Marshal(hostedOutput{Output: p.Output, Sources: p.Sources})
		if err := w.data(chunk{Type: "tool-output-available", ToolCallID: id, Output: out, Dynamic: true, ProviderExecuted: true}); err != nil {
			return err
		}
	}
	return e.sources(w, p.Sources)
}

// hostedOutput is a hosted tool's output on the page.
type hostedOutput struct {
	Output  string            `json:"output,omitempty"`
	Sources []runlet.Citation `json:"sources,omitempty"`
}

func cmpOr(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
