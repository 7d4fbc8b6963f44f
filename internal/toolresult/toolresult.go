// Package toolresult holds what the provider adapters share about sending
// a tool result that holds more than text (runlet.ToolResultPart.Parts).
package toolresult

import "github.com/runlet/runlet"

// Parts returns what an adapter sends for r: nil when r is text only (send
// r.Content as before); else r's parts in order, with r.Content first as a
// text part when no part is text (the JSON of a structured value, say), so
// that the model sees the result's text too.
func Parts(r runlet.ToolResultPart) []runlet.Part {
	if r.Parts == nil {
		return nil
	}
	for _, p := range r.Parts {
		if _, ok := p.(runlet.TextPart); ok {
			return r.Parts
		}
	}
	if r.Content == "" {
		return r.Parts
	}
	return append([]runlet.Part{runlet.TextPart{Text: r.Content}}, r.Parts...)
}

// HasMedia reports whether r holds an image, a file or audio.
func HasMedia(r runlet.ToolResultPart) bool {
	for _, p := range r.Parts {
		switch p.(type) {
		case runlet.ImagePart, runlet.FilePart, runlet.AudioPart:
			return true
		}
	}
	return false
}
