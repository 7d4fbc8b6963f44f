package runlet

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is something the model can call. Spec describes it to the model;
// Call runs it with the model's JSON arguments and returns the text the model
// sees. A returned error becomes an is-error tool result, so the model can
// correct itself; the run goes on.
type Tool interface {
	Spec() ToolSpec
	Call(ctx context.Context, args json.RawMessage) (string, error)
}

// ToolPolicy is how the runtime treats a tool. A Tool may provide one by
// implementing PolicyTool; tools made by NewTool do, from their ToolOptions.
type ToolPolicy struct {
	// Timeout bounds one call; zero means the run's or Runtime's.
	Timeout time.Duration
	// MaxOutput caps the result's size in bytes like WithMaxToolOutput;
	// zero means the run's or Runtime's, negative never truncates.
	MaxOutput int
	// RequiresApproval interrupts the run before the call until a human
	// decides (see Runtime.Resume).
	RequiresApproval bool
}

// funcTool is a Tool backed by a typed Go function; see NewTool.
type funcTool struct {
	spec     ToolSpec
	policy   ToolPolicy
	resolved *jsonschema.Resolved
	quick    *quickSchema // the common case of resolved, checked in place
	call     func(ctx context.Context, args json.RawMessage) (string, error)
	// call in two steps, decode then run, so that a run can decode the
	// arguments on its own goroutine, whose stack has grown already (on a
	// fresh goroutine, encoding/json's first decode is mostly stack
	// growth). decode returns a *In.
	decode func(args json.RawMessage) (any, error)
	run    func(ctx context.Context, in any) (toolRet, error)
	// callerHistory is WithCallerHistory's, which only AsTool accepts.
	callerHistory bool
}

// NewTool makes a Tool from a typed function. The input schema is inferred
// from In (a struct; field names from json tags, descriptions from
// `jsonschema:"..."` tags), and the model's arguments are validated against
// it before fn runs, so fn never sees malformed input.
//
// Out may be a string (used as is), a ToolOutput (text, images, files,
// audio and a structured value; see ToolOutput) or any JSON-encodable
// value (sent as its JSON text).
//
// NewTool panics if In's schema cannot be inferred (a programming error, like
// regexp.MustCompile); use NewToolE to get the error instead.
func NewTool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...ToolOption) Tool {
	t, err := NewToolE(name, description, fn, opts...)
	if err != nil {
		panic(err)
	}
	return t
}

// NewToolE is NewTool returning an error instead of panicking. Both refuse
// what a provider would reject: a name outside ^[a-zA-Z0-9_-]{1,64}$ and an
// input schema that is not an object (In a string, say).
func NewToolE[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...ToolOption) (Tool, error) {
	if !validToolName(name) {
		return nil, fmt.Errorf("runlet: tool name %q: use 1 to 64 ASCII letters, digits, '_' or '-' (what every provider accepts)", name)
	}
	if fn == nil {
		return nil, fmt.Errorf("runlet: tool %q has a nil func", name)
	}
	spec := ToolSpec{Name: name, Description: description}
	if reflect.TypeFor[In]() == reflect.TypeFor[struct{}]() || reflect.TypeFor[In]() == reflect.TypeFor[any]() {
		spec.InputSchema = &jsonschema.Schema{Type: "object"}
	} else {
		s, err := jsonschema.For[In](nil)
		if err != nil {
			return nil, fmt.Errorf("runlet: tool %q: inferring input schema: %w", name, err)
		}
		spec.InputSchema = s
	}
	t, err := newFuncTool(spec, opts)
	if err != nil {
		return nil, err
	}
	if t.callerHistory {
		return nil, fmt.Errorf("runlet: tool %q: WithCallerHistory is for an agent's tool (Agent.AsTool); a function tool sees its arguments only", name)
	}
	t.decode = func(args json.RawMessage) (any, error) {
		in := new(In)
		if err := json.Unmarshal(args, in); err != nil {
			return nil, &ToolError{Tool: name, Kind: ToolInvalidArgs, Err: err}
		}
		return in, nil
	}
	t.run = func(ctx context.Context, in any) (toolRet, error) {
		out, err := fn(ctx, *in.(*In))
		if err != nil {
			return toolRet{}, err
		}
		switch o := any(out).(type) { // without boxing out
		case string:
			return toolRet{s: o}, nil
		case ToolOutput:
			return retOf(o), nil
		}
		s, err := encodeOutput(out)
		return toolRet{s: s}, err
	}
	decode, run := t.decode, t.run
	t.call = func(ctx context.Context, args json.RawMessage) (string, error) {
		in, err := decode(args)
		if err != nil {
			return "", err
		}
		ret, err := run(ctx, in)
		if err != nil || ret.o == nil {
			return ret.s, err
		}
		res, err := ret.o.resolve()
		return res.content, err
	}
	return t, nil
}

// predecode decodes args as the tool's call would, for invocation.call:
// it returns the *In, a *decodeFailed, or nil when the call should decode
// them itself (a decoder that panics, such as a custom UnmarshalJSON, is
// left to the call, where the panic is recovered and reported as the
// tool's).
func (t *funcTool) predecode(args json.RawMessage) (in any) {
	if t.decode == nil || t.run == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			in = nil
		}
	}()
	in, err := t.decode(args)
	if err != nil {
		return &decodeFailed{err}
	}
	return in
}

// decodeFailed is the decoding error a call returns (see predecode).
type decodeFailed struct{ err error }

// newFuncTool makes the part of a tool that NewTool and Agent.AsTool
// share: spec as opts leave it, its input schema checked and resolved. The
// caller sets its call.
func newFuncTool(spec ToolSpec, opts []ToolOption) (*funcTool, error) {
	t := &funcTool{spec: spec}
	for _, o := range opts {
		o.applyTool(t)
	}
	if s := t.spec.InputSchema; s == nil || s.Type != "object" {
		return nil, fmt.Errorf("runlet: tool %q: the input schema must be a JSON object schema (type \"object\"), as providers require; use a struct for In", spec.Name)
	}
	r, err := t.spec.InputSchema.Resolve(nil)
	if err == nil {
		err = refLoop(t.spec.InputSchema)
	}
	if err != nil {
		return nil, fmt.Errorf("runlet: tool %q: resolving input schema: %w", spec.Name, err)
	}
	t.resolved, t.quick = r, compileQuick(t.spec.InputSchema)
	return t, nil
}

func encodeOutput(out any) (string, error) {
	switch v := out.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case fmt.Stringer:
		return v.String(), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encoding tool output: %w", err)
	}
	return string(b), nil
}

func (t *funcTool) Spec() ToolSpec { return t.spec }

var _ PolicyTool = (*funcTool)(nil)

func (t *funcTool) Policy() ToolPolicy { return t.policy }

func (t *funcTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	if err := t.validate(args); err != nil {
		return "", err
	}
	return t.call(ctx, args)
}

var _ PartsTool = (*funcTool)(nil)

// CallParts is Call returning the tool's whole output: its parts and
// structured value, when its function returns a ToolOutput.
func (t *funcTool) CallParts(ctx context.Context, args json.RawMessage) (ToolOutput, error) {
	if err := t.validate(args); err != nil {
		return ToolOutput{}, err
	}
	ret, err := t.callRet(ctx, args)
	if err != nil {
		return ToolOutput{}, err
	}
	return ret.output(), nil
}

// callRet calls the tool, without validating args, returning its output
// when it has one.
func (t *funcTool) callRet(ctx context.Context, args json.RawMessage) (toolRet, error) {
	if t.decode == nil || t.run == nil { // an agent's tool's prompt builder
		s, err := t.call(ctx, args)
		return toolRet{s: s}, err
	}
	in, err := t.decode(args)
	if err != nil {
		return toolRet{}, err
	}
	return t.run(ctx, in)
}

// validate checks args against the input schema.
func (t *funcTool) validate(args json.RawMessage) error { return t.validateArgs(args, false) }

// validateArgs is validate, told whether args are known to be valid JSON
// (a run checks that first), so as not to scan them twice.
func (t *funcTool) validateArgs(args json.RawMessage, validJSON bool) error {
	if t.resolved == nil {
		return nil
	}
	if t.quick != nil && (validJSON || json.Valid(args)) && t.quick.valid(args) {
		return nil // certainly valid: no need to decode args into a tree
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return &ToolError{Tool: t.spec.Name, Kind: ToolInvalidJSON, Err: err}
	}
	if err := caseTwins(v, t.spec.InputSchema); err != nil {
		return &ToolError{Tool: t.spec.Name, Kind: ToolInvalidArgs, Err: err}
	}
	if err := t.resolved.Validate(v); err != nil {
		return &ToolError{Tool: t.spec.Name, Kind: ToolInvalidArgs, Err: err}
	}
	return nil
}

// caseTwins refuses an object, at any depth of v, with two property names
// that differ only in case ("path" and "PATH", or "k" and the Kelvin sign
// "\u212a"), or with a name that is one of its schema's properties but
// for case. encoding/json fills a struct field from any of them, the last
// one winning, while the schema checks each name on its own: without
// this, a schema that allows other properties would check "path" (or
// nothing) and the tool would get "PATH". s is v's schema, or nil.
func caseTwins(v any, s *jsonschema.Schema) error {
	switch v := v.(type) {
	case map[string]any:
		var props map[string]*jsonschema.Schema
		if s != nil {
			props = s.Properties
		}
		seen := make(map[string]string, len(v)+len(props))
		for k := range v {
			f := fold(k)
			if twin, ok := seen[f]; ok {
				return twins(k, twin)
			}
			seen[f] = k
		}
		for name := range props {
			if k, ok := seen[fold(name)]; ok && k != name {
				if _, declared := props[k]; !declared {
					return twins(k, name)
				}
			}
		}
		for k, e := range v {
			if err := caseTwins(e, props[k]); err != nil {
				return err
			}
		}
	case []any:
		var items *jsonschema.Schema
		if s != nil {
			items = s.Items
		}
		for _, e := range v {
			if err := caseTwins(e, items); err != nil {
				return err
			}
		}
	}
	return nil
}

func twins(a, b string) error {
	return fmt.Errorf("properties %q and %q differ only in case; names are case-sensitive", min(a, b), max(a, b))
}

// fold is s case-folded as encoding/json matches names to fields.
func fold(s string) string {
	return strings.Map(func(r rune) rune { return unicode.ToUpper(unicode.ToLower(r)) }, s)
}

// SchemaFor returns the JSON Schema inferred from T, the way NewTool infers
// a tool's input schema: field names from json tags, descriptions from
// `jsonschema:"..."` tags. It is a *jsonschema.Schema from
// github.com/google/jsonschema-go/jsonschema, ready for WithInputSchema or
// OutputSchema. It panics if T has no JSON Schema (a channel or func type: a
// programming error, like regexp.MustCompile).
func SchemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("runlet: SchemaFor[%s]: %v", reflect.TypeFor[T](), err))
	}
	return s
}

// validToolName reports whether name matches ^[a-zA-Z0-9_-]{1,64}$.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// PolicyTool is a Tool that says how the runtime treats it. Tools made by
// NewTool and NewAgentTool implement it; a wrapper around a Tool should too,
// passing on (or changing) the policy of the tool it wraps.
type PolicyTool interface {
	Tool
	Policy() ToolPolicy
}

// PolicyOf returns t's policy when t is a PolicyTool, else the zero policy.
func PolicyOf(t Tool) ToolPolicy {
	if p, ok := t.(PolicyTool); ok {
		return p.Policy()
	}
	return ToolPolicy{}
}

// truncate shortens s to at most max bytes on a UTF-8 boundary and appends a
// marker saying how much was cut.
func truncate(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && cut < len(s) && !utf8Start(s[cut]) {
		cut--
	}
	var b strings.Builder
	b.Grow(cut + 64)
	b.WriteString(s[:cut])
	fmt.Fprintf(&b, "\n[output truncated: showing %d of %d bytes]", cut, len(s))
	return b.String()
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
