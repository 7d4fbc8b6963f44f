package openai

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// The Chat Completions request body, written directly from the
// ModelRequest into a pooled buffer and copied out once: the same bytes
// encoding/json writes for the wire structs the adapter used to build
// (chat_request_ref_test.go keeps them; the tests compare the two byte for
// byte), without building them: no messages slice, no boxed contents, no
// encoder.

// chatScratch holds the buffers bodies are written into.
var chatScratch = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledRequest bounds the buffers kept in chatScratch.
const maxPooledRequest = 1 << 20

// chatWriter writes one body.
type chatWriter struct {
	b     []byte
	extra []string // pass-through option keys (sorted): generated keys of these names are left out
	n     int      // messages written
	// the images, files and audio of tool results written, waiting for
	// the user message that carries them after the last tool message (see
	// toolMessage)
	attach []chatContentPart
}

// chatWrite returns the body of req. The pass-through options (extra)
// replace generated keys of the same name; a nil option removes the key.
func chatWrite(req *runlet.ModelRequest, provider string, ctl *chatControl, stream bool, extra []string) ([]byte, error) {
	buf := getScratch()
	w := chatWriter{b: *buf, extra: extra}
	body, err := w.request(req, provider, ctl, stream)
	return putScratch(buf, w.b, body, err)
}

// getScratch returns a pooled buffer, empty, to write a body into.
func getScratch() *[]byte {
	buf := chatScratch.Get().(*[]byte)
	*buf = (*buf)[:0]
	return buf
}

// putScratch returns body (written in b) copied out of the buffer, or err,
// and puts the buffer, holding b's storage, back in the pool unless b grew
// too large.
func putScratch(buf *[]byte, b, body []byte, err error) ([]byte, error) {
	if err == nil {
		body = bytes.Clone(body)
	}
	if cap(b) <= maxPooledRequest {
		*buf = b[:0]
		chatScratch.Put(buf)
	}
	return body, err
}

func (w *chatWriter) request(req *runlet.ModelRequest, provider string, ctl *chatControl, stream bool) ([]byte, error) {
	w.b = append(w.b, `{"model":`...)
	w.b = wirejson.AppendString(w.b, ctl.model)
	w.b = append(w.b, `,"messages":[`...)
	if err := w.messages(req, provider, ctl); err != nil {
		return nil, err
	}
	w.b = append(w.b, ']')
	if len(req.Tools) > 0 || len(ctl.hostedDecls) > 0 {
		at := w.key("tools")
		w.b = append(w.b, '[')
		for i, d := range ctl.hostedDecls {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, d...) // checked: see chatHostedTools
		}
		for i, t := range req.Tools {
			if i > 0 || len(ctl.hostedDecls) > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"type":"function","function":{`...)
			var err error
			if w.b, err = appendFunction(w.b, &req.Tools[i]); err != nil {
				return nil, fmt.Errorf("tool %q: %w", t.Name, err)
			}
			if ctl.strict {
				w.b = append(w.b, `,"strict":true`...)
			}
			w.b = append(w.b, "}}"...)
		}
		w.b = append(w.b, ']')
		w.end(at, "tools")
		if _, err := toolChoice(req.ToolChoice, func(string) any { return nil }); err != nil {
			return nil, err
		}
		if mode := req.ToolChoice.Mode; mode != "" {
			at := w.key("tool_choice")
			if mode == runlet.ToolChoiceTool {
				// encoding/json writes a map's keys sorted.
				w.b = append(w.b, `{"function":{"name":`...)
				w.b = wirejson.AppendString(w.b, req.ToolChoice.Name)
				w.b = append(w.b, `},"type":"function"}`...)
			} else {
				w.b = wirejson.AppendString(w.b, string(mode))
			}
			w.end(at, "tool_choice")
		}
	}
	if os := req.OutputSchema; os != nil {
		name, raw, strict, err := outputFormat(os)
		if err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		at := w.key("response_format")
		w.b = append(w.b, `{"type":"json_schema","json_schema":{"name":`...)
		w.b = wirejson.AppendString(w.b, name)
		if os.Description != "" {
			w.b = append(w.b, `,"description":`...)
			w.b = wirejson.AppendString(w.b, os.Description)
		}
		if os.Schema != nil {
			w.b = append(w.b, `,"schema":`...)
			if w.b, err = wirejson.AppendRaw(w.b, raw); err != nil {
				return nil, fmt.Errorf("output schema: %w", err)
			}
		}
		if strict {
			w.b = append(w.b, `,"strict":true`...)
		}
		w.b = append(w.b, "}}"...)
		w.end(at, "response_format")
	}
	for _, f := range [...]struct {
		key string
		v   *float64
	}{{"temperature", req.Temperature}, {"top_p", req.TopP}} {
		if f.v == nil {
			continue
		}
		at := w.key(f.key)
		var err error
		if w.b, err = wirejson.AppendFloat(w.b, *f.v); err != nil {
			return nil, fmt.Errorf("encoding request: %w", err)
		}
		w.end(at, f.key)
	}
	if n := req.MaxOutputTokens; n > 0 {
		at := w.key(ctl.maxTokensField)
		w.b = strconv.AppendInt(w.b, int64(n), 10)
		w.end(at, ctl.maxTokensField)
	}
	if len(req.StopSequences) > 0 {
		at := w.key("stop")
		for i, s := range req.StopSequences {
			if i > 0 {
				w.b = append(w.b, ',')
			} else {
				w.b = append(w.b, '[')
			}
			w.b = wirejson.AppendString(w.b, s)
		}
		w.b = append(w.b, ']')
		w.end(at, "stop")
	}
	if e := req.Reasoning.Effort; e != "" {
		at := w.key("reasoning_effort")
		w.b = wirejson.AppendString(w.b, string(e))
		w.end(at, "reasoning_effort")
	}
	if stream {
		w.b = append(w.b, `,"stream":true`...)
		at := w.key("stream_options")
		w.b = append(w.b, `{"include_usage":true}`...)
		w.end(at, "stream_options")
	}
	if ctl.webSearch != nil {
		at := w.key("web_search_options")
		w.b = append(w.b, ctl.webSearch...)
		w.end(at, "web_search_options")
	}
	for _, k := range w.extra {
		v := req.Options[k]
		if v == nil {
			continue
		}
		raw, err := wirejson.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("option %q: %w", k, err)
		}
		w.b = append(w.b, ',')
		w.b = wirejson.AppendString(w.b, k)
		w.b = append(w.b, ':')
		w.b = append(w.b, raw...)
	}
	return append(w.b, '}'), nil
}

// appendFunction appends the members of a function tool that Chat and
// Responses write alike: "name", "description" when there is one, and
// "parameters" (the tool's input schema, or emptyParams). The error is the
// schema's.
func appendFunction(dst []byte, t *runlet.ToolSpec) ([]byte, error) {
	params := emptyParams
	if t.InputSchema != nil {
		raw, err := schemajson.Marshal(t.InputSchema) // cached: tools go out every turn
		if err != nil {
			return dst, err
		}
		params = raw
	}
	dst = append(dst, `"name":`...)
	dst = wirejson.AppendString(dst, t.Name)
	if t.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = wirejson.AppendString(dst, t.Description)
	}
	dst = append(dst, `,"parameters":`...)
	return wirejson.AppendRaw(dst, params)
}

// key writes a key of the body and returns where it starts, for end.
func (w *chatWriter) key(k string) int {
	at := len(w.b)
	w.b = append(w.b, ',', '"')
	w.b = append(w.b, k...) // the adapter's keys need no escaping
	w.b = append(w.b, '"', ':')
	return at
}

// end drops the key written from at with its value when a pass-through
// option replaces it (its value is still generated, so errors are the
// same).
func (w *chatWriter) end(at int, k string) {
	if _, found := slices.BinarySearch(w.extra, k); found {
		w.b = w.b[:at]
	}
}
