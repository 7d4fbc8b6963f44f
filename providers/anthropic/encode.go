package anthropic

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/toolresult"
	"github.com/runlet/runlet/internal/wirejson"
)

// The request body is written directly into one buffer, field by field in
// the order encoding/json would write the request as a struct, so it is
// byte for byte what marshalling wire types gives (TestEncodeMatchesReference
// and FuzzEncodeRequest compare the two) without building them: messages
// are translated into a flat list of blocks kept in pooled scratch space,
// and the body is allocated once in the usual case.

// request is what buildRequest settled, besides the request's messages
// and tools.
type request struct {
	model           string
	maxTokens       int
	temperature     *float64
	topP            *float64
	stopSequences   []string
	thinking        any            // sent as given when not nil
	outputConfig    map[string]any // sent when not empty
	cacheControl    json.RawMessage
	disableParallel bool
	stream          bool
}

type reqKind uint8

const (
	reqText reqKind = iota
	reqThinking
	reqRedacted
	reqToolUse
	reqToolResult
	reqImage
	reqDocument
	reqRaw // a server tool's block, sent as received (see hosted.go)
)

// block is one request content block.
type block struct {
	kind      reqKind
	cache     bool   // carries the cache_control breakpoint
	isError   bool   // tool_result
	content   bool   // tool_result: text holds content
	text      string // text, thinking, redacted data, tool_result content
	signature string // thinking
	id        string // tool_use id, tool_result tool_use_id
	name      string // tool_use name, document title
	input     json.RawMessage
	source    *wireSource
	raw       json.RawMessage // reqRaw: the block; reqText: its citations array
	// a tool_result's content blocks, when it holds more than text
	inner []block
}

// span is one API message: blocks[start:end] with its role.
type span struct {
	role       string
	start, end int
}

type scratch struct {
	blocks []block
	spans  []span
}

// maxPooledBlocks bounds the scratch space kept for reuse.
const maxPooledBlocks = 4096

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// encodeRequest writes the body for w and req's messages and tools.
func (m *Messages) encodeRequest(w *request, req *runlet.ModelRequest) ([]byte, error) {
	sc := scratchPool.Get().(*scratch)
	defer func() {
		if cap(sc.blocks) <= maxPooledBlocks {
			clear(sc.blocks)
			sc.blocks, sc.spans = sc.blocks[:0], sc.spans[:0]
			scratchPool.Put(sc)
		}
	}()
	if err := m.translate(sc, req.Messages); err != nil {
		return nil, err
	}
	if w.cacheControl != nil {
		markLastBlock(sc)
	}

	b := make([]byte, 0, requestSize(req, sc.blocks))
	if m.cfg.vertex != "" {
		// Vertex AI takes the model in the URL and the version in the body.
		b = append(b, `{"anthropic_version":`...)
		b = wirejson.AppendString(b, VertexVersion)
	} else {
		b = append(b, `{"model":`...)
		b = wirejson.AppendString(b, w.model)
	}
	b = append(b, `,"max_tokens":`...)
	b = strconv.AppendInt(b, int64(w.maxTokens), 10)
	if req.Instructions != "" {
		b = append(b, `,"system":`...)
		if w.cacheControl != nil {
			b = append(b, `[{"type":"text","text":`...)
			b = wirejson.AppendString(b, req.Instructions)
			b = append(b, `,"cache_control":`...)
			b, _ = wirejson.AppendRaw(b, w.cacheControl) // valid: see cacheControlOption
			b = append(b, "}]"...)
		} else {
			b = wirejson.AppendString(b, req.Instructions)
		}
	}
	b = append(b, `,"messages":[`...)
	for i, s := range sc.spans {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":"`...)
		b = append(b, s.role...)
		b = append(b, `","content":[`...)
		for j := s.start; j < s.end; j++ {
			if j > s.start {
				b = append(b, ',')
			}
			b = appendBlock(b, &sc.blocks[j], w.cacheControl)
		}
		b = append(b, "]}"...)
	}
	b = append(b, ']')
	toolsAt := len(b)
	b = append(b, `,"tools":[`...)
	b, none, err := m.appendHostedTools(b, req.HostedTools, true)
	if err != nil {
		return nil, m.invalid("hosted tools", err)
	}
	if none && len(req.Tools) == 0 {
		b = b[:toolsAt] // no tools: no "tools" key
	} else {
		for i, t := range req.Tools {
			raw := emptySchema
			if t.InputSchema != nil {
				var err error
				if raw, err = schemajson.Marshal(t.InputSchema); err != nil { // cached: tools go out every turn
					return nil, m.invalid(fmt.Sprintf("tool %q: input schema", t.Name), err)
				}
			}
			if i > 0 || !none {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = wirejson.AppendString(b, t.Name)
			if t.Description != "" {
				b = append(b, `,"description":`...)
				b = wirejson.AppendString(b, t.Description)
			}
			b = append(b, `,"input_schema":`...)
			var err error
			if b, err = wirejson.AppendRaw(b, raw); err != nil {
				return nil, m.invalid("encoding request", err)
			}
			if w.cacheControl != nil && i == len(req.Tools)-1 {
				b = append(b, `,"cache_control":`...)
				b, _ = wirejson.AppendRaw(b, w.cacheControl)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
		b = appendToolChoice(b, req.ToolChoice, w.disableParallel)
	}
	if w.temperature != nil {
		b = append(b, `,"temperature":`...)
		if b, err = wirejson.AppendFloat(b, *w.temperature); err != nil {
			return nil, m.invalid("encoding request", err)
		}
	}
	if w.topP != nil {
		b = append(b, `,"top_p":`...)
		if b, err = wirejson.AppendFloat(b, *w.topP); err != nil {
			return nil, m.invalid("encoding request", err)
		}
	}
	if len(w.stopSequences) > 0 {
		b = append(b, `,"stop_sequences":[`...)
		for i, s := range w.stopSequences {
			if i > 0 {
				b = append(b, ',')
			}
			b = wirejson.AppendString(b, s)
		}
		b = append(b, ']')
	}
	if b, err = appendValue(b, `,"thinking":`, w.thinking, w.thinking != nil); err != nil {
		return nil, m.invalid("encoding request", err)
	}
	if b, err = appendValue(b, `,"output_config":`, w.outputConfig, len(w.outputConfig) > 0); err != nil {
		return nil, m.invalid("encoding request", err)
	}
	if w.stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}'), nil
}

// appendValue writes key and v, marshalled, when send is set.
func appendValue(b []byte, key string, v any, send bool) ([]byte, error) {
	if !send {
		return b, nil
	}
	raw, err := wirejson.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(append(b, key...), raw...), nil
}

// requestSize is a guess at the body's length, a little over for the
// usual request, so that the body is allocated once.
func requestSize(req *runlet.ModelRequest, blocks []block) int {
	n := 192 + len(req.Instructions)
	for i := range blocks {
		bl := &blocks[i]
		n += 64 + len(bl.text) + len(bl.signature) + len(bl.id) + len(bl.name) + len(bl.input) + len(bl.raw)
		if s := bl.source; s != nil {
			n += 64 + len(s.MediaType) + len(s.Data) + len(s.URL)
		}
	}
	for _, t := range req.Tools {
		n += 64 + len(t.Name) + len(t.Description) + len(emptySchema)
		if t.InputSchema != nil {
			if raw, err := schemajson.Marshal(t.InputSchema); err == nil {
				n += len(raw)
			}
		}
	}
	return n
}

// appendToolChoice writes the tool_choice object (keys sorted, as for a
// map); nothing for the provider default.
func appendToolChoice(b []byte, tc runlet.ToolChoice, disableParallel bool) []byte {
	var typ string
	switch tc.Mode {
	case runlet.ToolChoiceAuto:
		typ = "auto"
	case runlet.ToolChoiceRequired:
		typ = "any"
	case runlet.ToolChoiceTool:
		typ = "tool"
	case runlet.ToolChoiceNone:
		return append(b, `,"tool_choice":{"type":"none"}`...)
	}
	if typ == "" {
		if !disableParallel {
			return b
		}
		typ = "auto"
	}
	b = append(b, `,"tool_choice":{`...)
	if disableParallel {
		b = append(b, `"disable_parallel_tool_use":true,`...)
	}
	if typ == "tool" {
		b = append(b, `"name":`...)
		b = wirejson.AppendString(b, tc.Name)
		b = append(b, ',')
	}
	b = append(b, `"type":"`...)
	b = append(b, typ...)
	return append(b, `"}`...)
}

// appendBlock writes one content block, its fields in the order of the
// wire type's.
func appendBlock(b []byte, bl *block, cc json.RawMessage) []byte {
	switch bl.kind {
	case reqText:
		b = append(b, `{"type":"text","text":`...)
		b = wirejson.AppendString(b, bl.text)
		if len(bl.raw) > 0 {
			b = append(b, `,"citations":`...)
			b = append(b, bl.raw...) // checked: see sentCitations
		}
	case reqRaw:
		b = append(b, bl.raw[:len(bl.raw)-1]...) // a checked object: see hostedBlocks
	case reqThinking:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = wirejson.AppendString(b, bl.text)
		b = append(b, `,"signature":`...)
		b = wirejson.AppendString(b, bl.signature)
	case reqRedacted:
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = wirejson.AppendString(b, bl.text)
	case reqToolUse:
		b = append(b, `{"type":"tool_use"`...)
		if bl.id != "" {
			b = append(b, `,"id":`...)
			b = wirejson.AppendString(b, bl.id)
		}
		if bl.name != "" {
			b = append(b, `,"name":`...)
			b = wirejson.AppendString(b, bl.name)
		}
		b = append(b, `,"input":`...)
		b, _ = wirejson.AppendRaw(b, bl.input) // valid: see wirejson.Object
	case reqToolResult:
		b = append(b, `{"type":"tool_result"`...)
		if bl.id != "" {
			b = append(b, `,"tool_use_id":`...)
			b = wirejson.AppendString(b, bl.id)
		}
		switch {
		case bl.inner != nil:
			b = append(b, `,"content":[`...)
			for i := range bl.inner {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendBlock(b, &bl.inner[i], nil)
			}
			b = append(b, ']')
		case bl.content:
			b = append(b, `,"content":`...)
			b = wirejson.AppendString(b, bl.text)
		}
		if bl.isError {
			b = append(b, `,"is_error":true`...)
		}
	case reqImage, reqDocument:
		if bl.kind == reqImage {
			b = append(b, `{"type":"image","source":`...)
		} else {
			b = append(b, `{"type":"document","source":`...)
		}
		b = appendSource(b, bl.source)
		if bl.name != "" {
			b = append(b, `,"title":`...)
			b = wirejson.AppendString(b, bl.name)
		}
	}
	if bl.cache {
		b = append(b, `,"cache_control":`...)
		b, _ = wirejson.AppendRaw(b, cc)
	}
	return append(b, '}')
}

func appendSource(b []byte, s *wireSource) []byte {
	b = append(b, `{"type":`...)
	b = wirejson.AppendString(b, s.Type)
	for _, f := range [...]struct{ key, v string }{{`,"media_type":`, s.MediaType}, {`,"data":`, s.Data}, {`,"url":`, s.URL}} {
		if f.v != "" {
			b = append(b, f.key...)
			b = wirejson.AppendString(b, f.v)
		}
	}
	return append(b, '}')
}

// translate converts runlet messages to the API's alternating
// user/assistant messages. RoleTool messages become user messages of
// tool_result blocks; consecutive messages with the same API role are
// merged, and within a user message tool_result blocks come first, as the
// API requires. Messages left without blocks are dropped.
func (m *Messages) translate(sc *scratch, msgs []runlet.Message) error {
	for i, msg := range msgs {
		role := "user"
		if msg.Role == runlet.RoleAssistant {
			role = "assistant"
		}
		start := len(sc.blocks)
		for _, p := range msg.Parts {
			var err error
			if sc.blocks, err = m.appendPart(sc.blocks, p); err != nil {
				return m.invalid(fmt.Sprintf("message %d", i), err)
			}
		}
		switch n := len(sc.spans); {
		case len(sc.blocks) == start:
		case n > 0 && sc.spans[n-1].role == role:
			sc.spans[n-1].end = len(sc.blocks)
		default:
			sc.spans = append(sc.spans, span{role: role, start: start, end: len(sc.blocks)})
		}
	}
	for _, s := range sc.spans {
		if s.role == "user" {
			toolResultsFirst(sc.blocks[s.start:s.end])
		}
	}
	return nil
}

// toolResultsFirst moves tool_result blocks to the front, keeping order.
func toolResultsFirst(blocks []block) {
	sorted := true
	seenOther := false
	for i := range blocks {
		if blocks[i].kind != reqToolResult {
			seenOther = true
		} else if seenOther {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	slices.SortStableFunc(blocks, func(a, b block) int {
		ra, rb := a.kind == reqToolResult, b.kind == reqToolResult
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
}

// markLastBlock puts the cache breakpoint on the last block of the last
// message that can carry one (thinking blocks cannot).
func markLastBlock(sc *scratch) {
	if len(sc.spans) == 0 {
		return
	}
	s := sc.spans[len(sc.spans)-1]
	for i := s.end - 1; i >= s.start; i-- {
		if k := sc.blocks[i].kind; k != reqThinking && k != reqRedacted && k != reqRaw {
			sc.blocks[i].cache = true
			return
		}
	}
}

// appendPart appends the blocks for one part.
func (m *Messages) appendPart(blocks []block, p runlet.Part) ([]block, error) {
	switch p := p.(type) {
	case runlet.TextPart:
		if p.Text != "" { // the API rejects empty text blocks
			blocks = append(blocks, block{kind: reqText, text: p.Text, raw: m.sentCitations(p.Citations)})
		}
	case runlet.HostedToolPart:
		// This adapter's server tool blocks go back as received; another
		// provider's (or damaged ones) as text.
		if items, ok := m.hostedBlocks(p); ok {
			for _, it := range items {
				blocks = append(blocks, block{kind: reqRaw, raw: it})
			}
		} else if text := p.Text(); text != "" {
			blocks = append(blocks, block{kind: reqText, text: text})
		}
	case runlet.ReasoningPart:
		// Continuation state goes back only to the provider that made it.
		if p.Provider != m.cfg.name {
			break
		}
		switch {
		case p.Signature != "":
			blocks = append(blocks, block{kind: reqThinking, text: p.Text, signature: p.Signature})
		case p.Encrypted != "":
			blocks = append(blocks, block{kind: reqRedacted, text: p.Encrypted})
		}
	case runlet.ToolCallPart:
		blocks = append(blocks, block{kind: reqToolUse, id: toolID(p.ID), name: p.Name, input: wirejson.Object(p.Arguments)})
	case runlet.ToolResultPart:
		bl := block{kind: reqToolResult, id: toolID(p.CallID), isError: p.IsError, content: p.Content != "", text: p.Content}
		// A result with images or files: its content is an array of text,
		// image and document blocks (the tool_result content the API
		// documents); audio, which the API does not take, is an error.
		if parts := toolresult.Parts(p); parts != nil {
			bl.inner = []block{}
			for _, q := range parts {
				if _, ok := q.(runlet.AudioPart); ok {
					return nil, fmt.Errorf("tool result %q holds audio, which the Messages API does not take in a tool_result", p.CallID)
				}
				var err error
				if bl.inner, err = m.appendPart(bl.inner, q); err != nil {
					return nil, fmt.Errorf("tool result %q: %w", p.CallID, err)
				}
			}
		}
		blocks = append(blocks, bl)
	case runlet.AudioPart:
		return nil, fmt.Errorf("audio part: the Messages API does not take audio")
	case runlet.ImagePart:
		src := source(p.URL, p.MediaType, p.Data, false)
		if src == nil {
			return nil, fmt.Errorf("image part has neither URL nor data")
		}
		blocks = append(blocks, block{kind: reqImage, source: src})
	case runlet.FilePart:
		image := strings.HasPrefix(p.MediaType, "image/")
		src := source(p.URL, p.MediaType, p.Data, !image)
		switch {
		case src == nil:
			return nil, fmt.Errorf("file part %q has neither URL nor data", p.Name)
		case image:
			blocks = append(blocks, block{kind: reqImage, source: src})
		default:
			blocks = append(blocks, block{kind: reqDocument, source: src, name: p.Name})
		}
	}
	return blocks, nil
}
