package runlet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet/internal/weakcache"
)

// outputState is a run's structured-output machinery: the mode, the schema
// as sent, the check of final answers, and the partial value while a
// response streams.
type outputState struct {
	mode     OutputMode
	schema   *OutputSchema      // as the agent or run option gave it
	sent     *jsonschema.Schema // the schema the model sees: wrapped in {"value": ...} unless an object
	wrapped  bool
	resolved *jsonschema.Resolved // of schema.Schema, for validation
	prompt   string               // OutputPrompted: appended to the instructions
	tool     ToolSpec             // OutputTool: the output tool
	retries  int
	decode   func(json.RawMessage) error
	attempts int // answers checked so far

	// streaming, reset for every model call
	buf       []byte
	callIndex int    // OutputTool: stream index of the output call; -1 until seen
	parsed    int    // len(buf) when last parsed
	last      string // last partial JSON emitted
}

// setupOutput prepares the output state from the run options and agent; in
// tool mode it adds the output tool to the specs.
func (r *run) setupOutput() error {
	c := r.cfg.output
	s := c.schema
	if s == nil {
		s = r.agent.OutputSchema
	}
	if s == nil || s.Schema == nil {
		return nil
	}
	mode := c.mode
	if mode == OutputAuto {
		mode = s.Mode
	}
	if err := checkMode(mode); err != nil {
		return err
	}
	if mode == OutputAuto {
		mode = modeOf(r.agent.Model, s)
		if checkMode(mode) != nil {
			mode = OutputNative
		}
	}
	resolved, err := resolveOutput(s.Schema)
	if err != nil {
		return fmt.Errorf("runlet: output schema %q: %w", s.Name, err)
	}
	o := &outputState{mode: mode, schema: s, sent: s.Schema, resolved: resolved, retries: defaultOutputRetries, decode: c.decode}
	if c.retriesSet {
		o.retries = max(c.retries, 0)
	}
	if s.Schema.Type != "object" {
		o.wrapped = true
		o.sent = wrappedOutput(s.Schema)
	}
	switch mode {
	case OutputTool:
		if r.toolAt(outputToolName) >= 0 {
			return fmt.Errorf("runlet: agent %q: a tool is named %q, which output tool mode needs", r.agent.Name, outputToolName)
		}
		desc := "Give the final answer. Call this tool once, when you have the answer."
		if s.Description != "" {
			desc += " The answer: " + s.Description
		}
		o.tool = ToolSpec{Name: outputToolName, Description: desc, InputSchema: o.sent}
	case OutputPrompted:
		raw, err := json.Marshal(o.sent)
		if err != nil {
			return fmt.Errorf("runlet: output schema %q: %w", s.Name, err)
		}
		o.prompt = "Answer with only a JSON value, without any text or code fence around it, that matches this JSON Schema:\n" + string(raw)
		if s.Description != "" {
			o.prompt += "\nThe value is: " + s.Description
		}
	}
	r.out = o
	return nil
}

// Per-schema caches, keyed weakly by the schema's address: schemas are
// immutable once used, and an entry goes away with its schema.
var (
	resolvedOutputs weakcache.Cache[jsonschema.Schema, *jsonschema.Resolved]
	wrappedOutputs  weakcache.Cache[jsonschema.Schema, *jsonschema.Schema]
)

// resolveOutput resolves s once per schema.
func resolveOutput(s *jsonschema.Schema) (*jsonschema.Resolved, error) {
	return resolvedOutputs.Get(s, func(s *jsonschema.Schema) (*jsonschema.Resolved, error) {
		if err := refLoop(s); err != nil {
			return nil, err
		}
		return s.Resolve(nil)
	})
}

// wrappedOutput is wrapSchema(s), made once per schema.
func wrappedOutput(s *jsonschema.Schema) *jsonschema.Schema {
	w, _ := wrappedOutputs.Get(s, func(s *jsonschema.Schema) (*jsonschema.Schema, error) { return wrapSchema(s), nil })
	return w // wrapSchema cannot fail
}

// wrapSchema puts a schema that is not an object under the property
// "value" of one, since providers want an object at the root. $defs move to
// the new root so references still resolve.
func wrapSchema(s *jsonschema.Schema) *jsonschema.Schema {
	inner := *s
	inner.Defs, inner.Definitions = nil, nil
	return &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{"value": &inner},
		Required:             []string{"value"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Defs:                 s.Defs,
		Definitions:          s.Definitions,
	}
}

// shapeRequest puts the output schema into req the way the mode needs.
func (o *outputState) shapeRequest(req *ModelRequest) {
	o.buf, o.callIndex, o.parsed, o.last = o.buf[:0], -1, 0, ""
	switch o.mode {
	case OutputNative:
		s := *o.schema
		s.Schema, s.Mode = o.sent, OutputNative
		if s.Name == "" {
			s.Name = "output"
		}
		req.OutputSchema = &s
	case OutputTool:
		req.OutputSchema = nil
		req.Tools = append(slices.Clip(req.Tools), o.tool)
		if len(req.Tools) == 1 {
			req.ToolChoice = ToolChoice{Mode: ToolChoiceTool, Name: outputToolName}
		} else {
			req.ToolChoice = ToolChoice{Mode: ToolChoiceRequired}
		}
	case OutputPrompted:
		req.OutputSchema = nil
		if req.Instructions != "" {
			req.Instructions += "\n\n" + o.prompt
		} else {
			req.Instructions = o.prompt
		}
	}
}

// checkOutput looks at a response of a run with an output schema. It
// returns the tool calls to run next (none to ask the model again), or an
// error once the run is to end: errEnded when it finished with a valid
// answer, else why it fails (a refusal, an answer still invalid after the
// last retry).
func (r *run) checkOutput(resp *ModelResponse, calls []ToolCallPart) ([]ToolCallPart, error) {
	o := r.out
	if resp.FinishReason == FinishRefusal {
		return nil, &RefusalError{Text: strings.TrimSpace(resp.Message.Text())}
	}
	var outCall *ToolCallPart
	if o.mode == OutputTool {
		for i := range calls {
			if calls[i].Name == outputToolName {
				outCall = &calls[i]
				break
			}
		}
	}
	if outCall == nil && len(calls) > 0 {
		return calls, nil // tools first
	}
	raw := resp.Message.Text()
	if outCall != nil {
		raw = string(outCall.Arguments)
	}
	o.attempts++
	answer, errs := o.check(raw, outCall != nil, resp.FinishReason)
	retrying := len(errs) > 0 && o.attempts <= o.retries
	if r.watched {
		r.emit(&OutputChecked{Mode: o.mode, Attempt: o.attempts, Valid: len(errs) == 0, Errors: errs, Retrying: retrying})
	}
	if len(errs) == 0 {
		final := *resp
		final.Message = answerMessage(resp.Message, answer)
		r.added[len(r.added)-1] = final.Message
		return nil, r.finish(&final)
	}
	if !retrying {
		return nil, &OutputError{Mode: o.mode, Raw: raw, Errors: errs, Attempts: o.attempts}
	}
	r.added = append(r.added, repairMessage(o.mode, calls, outCall, errs))
	return nil, r.commit()
}

// check validates an answer and decodes it. It returns the answer's JSON
// text, or what is wrong with it.
func (o *outputState) check(raw string, fromTool bool, finish FinishReason) (json.RawMessage, []string) {
	text := strings.TrimSpace(raw)
	if o.mode != OutputNative && !fromTool {
		text = stripFence(text)
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		msg := "the answer is not valid JSON: " + err.Error()
		if finish == FinishLength {
			msg = "the answer was cut off at the output token limit; give a shorter answer"
		}
		return nil, []string{msg}
	}
	answer := json.RawMessage(text)
	if o.wrapped {
		var w struct {
			Value json.RawMessage `json:"value"`
		}
		m, isObj := v.(map[string]any)
		if _, has := m["value"]; !isObj || !has || json.Unmarshal(answer, &w) != nil {
			return nil, []string{`the answer must be an object {"value": ...} holding the value`}
		}
		v, answer = m["value"], w.Value
	}
	dropOptionalNulls(v, o.schema.Schema, o.schema.Schema, 0)
	if err := caseTwins(v, o.schema.Schema); err != nil { // Go decodes names in any case
		return nil, []string{"the answer does not match the schema: " + err.Error()}
	}
	if err := o.resolved.Validate(v); err != nil {
		return nil, []string{"the answer does not match the schema: " + err.Error()}
	}
	if o.decode != nil {
		if err := o.decode(answer); err != nil {
			return nil, []string{"the answer does not decode: " + err.Error()}
		}
	}
	return answer, nil
}

// stripFence removes a Markdown code fence around text.
func stripFence(text string) string {
	if !strings.HasPrefix(text, "```") || !strings.HasSuffix(text, "```") || len(text) < 6 {
		return text
	}
	body := text[3 : len(text)-3]
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[\"") {
		body = body[nl+1:] // the info string, such as "json"
	}
	return strings.TrimSpace(body)
}

// answerMessage is the stored final answer: the response's reasoning, then
// the answer's JSON as text (so sessions hold the JSON, whatever the mode).
func answerMessage(m Message, answer json.RawMessage) Message {
	out := Message{Role: RoleAssistant}
	for _, p := range m.Parts {
		if _, ok := p.(ReasoningPart); ok {
			out.Parts = append(out.Parts, p)
		}
	}
	out.Parts = append(out.Parts, TextPart{Text: string(answer)})
	return out
}

// repairMessage tells the model what was wrong with its answer: as the
// output call's is-error result in tool mode (with a result for every call
// of the turn, as providers require), else as a user message.
func repairMessage(mode OutputMode, calls []ToolCallPart, outCall *ToolCallPart, errs []string) Message {
	var b strings.Builder
	b.WriteString("Your answer was rejected:\n")
	for _, e := range errs {
		b.WriteString("- ")
		b.WriteString(truncate(e, 2000))
		b.WriteByte('\n')
	}
	switch {
	case outCall != nil:
		b.WriteString("Call " + outputToolName + " again with arguments that match its schema.")
	case mode == OutputTool:
		b.WriteString("Give the final answer by calling the " + outputToolName + " tool.")
	default:
		b.WriteString("Answer again with only the JSON value that matches the schema.")
	}
	if outCall == nil {
		return UserText(b.String())
	}
	parts := make([]Part, 0, len(calls))
	for _, c := range calls {
		res := ToolResultPart{CallID: c.ID, Name: c.Name, IsError: true,
			Content: "Error: not run: " + outputToolName + " was called in the same turn; call tools and " + outputToolName + " in separate turns."}
		if c.ID == outCall.ID {
			res.Content = "Error: " + b.String()
		}
		parts = append(parts, res)
	}
	return Message{Role: RoleTool, Parts: parts}
}

// maxSchemaDepth bounds how deep dropOptionalNulls and allowsNull follow
// a value and its schema's references.
const maxSchemaDepth = 64

// dropOptionalNulls deletes, from objects in v, null members that s does
// not require and whose schema does not allow null: strict modes make
// providers send null for an optional field they would otherwise leave out.
func dropOptionalNulls(v any, s, root *jsonschema.Schema, depth int) {
	if s == nil || depth > maxSchemaDepth {
		return
	}
	if s.Ref != "" {
		s = lookupRef(root, s.Ref)
		if s == nil {
			return
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			ps := s.Properties[k]
			if ps == nil {
				ps = s.AdditionalProperties
			}
			if val == nil && ps != nil && s.Properties[k] != nil && !slices.Contains(s.Required, k) && !allowsNull(ps, root, 0) {
				delete(x, k)
				continue
			}
			dropOptionalNulls(val, ps, root, depth+1)
		}
	case []any:
		for _, e := range x {
			dropOptionalNulls(e, s.Items, root, depth+1)
		}
	}
}

// allowsNull reports whether s may allow null, so that a null it meets is
// kept for the validator to judge. References are followed at most
// maxSchemaDepth deep: a cycle of anyOf and $ref ("#/$defs/r" being
// anyOf [string, r]) overflowed the stack before.
func allowsNull(s, root *jsonschema.Schema, depth int) bool {
	if depth > maxSchemaDepth {
		return true
	}
	if s.Ref != "" {
		if s = lookupRef(root, s.Ref); s == nil {
			return true
		}
	}
	if s.Type != "" || len(s.Types) > 0 {
		return s.Type == "null" || slices.Contains(s.Types, "null")
	}
	unconstrained := len(s.AnyOf) == 0 && len(s.OneOf) == 0 && s.Enum == nil && s.Const == nil
	return unconstrained || slices.ContainsFunc(s.AnyOf, func(a *jsonschema.Schema) bool { return allowsNull(a, root, depth+1) })
}

// lookupRef finds a local reference "#/$defs/name" or "#/definitions/name".
func lookupRef(root *jsonschema.Schema, ref string) *jsonschema.Schema {
	if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
		return root.Defs[name]
	}
	if name, ok := strings.CutPrefix(ref, "#/definitions/"); ok {
		return root.Definitions[name]
	}
	return nil
}

// outputDelta follows a streamed response and emits OutputPartial when the
// answer's parsed prefix changes.
func (r *run) outputDelta(ev StreamEvent) {
	o := r.out
	if js, ok := o.partial(ev); ok {
		r.emitAnswer(&OutputPartial{Mode: o.mode, Attempt: o.attempts + 1, JSON: js})
	}
}

// partial adds a delta of the answer and returns the JSON of the value
// parsed so far, if it changed. Parsing starts over from the first byte
// each time, so it is done only once the answer grew by 1/16 of what was
// parsed before: a long answer costs O(n log n), not O(n²), and a short
// one is parsed at almost every delta.
func (o *outputState) partial(ev StreamEvent) (json.RawMessage, bool) {
	switch {
	case ev.Kind == StreamTextDelta && o.mode != OutputTool:
	case ev.Kind == StreamToolCallDelta && o.mode == OutputTool:
		if ev.Name == outputToolName && o.callIndex < 0 {
			o.callIndex = ev.Index
		}
		if ev.Index != o.callIndex {
			return nil, false
		}
	default:
		return nil, false
	}
	o.buf = append(o.buf, ev.Delta...)
	if len(o.buf)-o.parsed < o.parsed/16 {
		return nil, false
	}
	o.parsed = len(o.buf)
	text := o.buf
	if o.mode == OutputPrompted {
		text = skipFenceStart(text)
	}
	v, ok := parsePartialJSON(text)
	if ok && o.wrapped {
		m, isObj := v.(map[string]any)
		v, ok = m["value"], isObj && m["value"] != nil
	}
	if !ok {
		return nil, false
	}
	js, err := json.Marshal(v)
	if err != nil || string(js) == o.last {
		return nil, false
	}
	o.last = string(js)
	return js, true
}

// skipFenceStart skips leading space and the opening line of a code fence.
func skipFenceStart(b []byte) []byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if !bytes.HasPrefix(b, []byte("```")) {
		return b
	}
	if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
		return b[nl+1:]
	}
	return nil
}
