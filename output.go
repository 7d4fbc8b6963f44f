package runlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// defaultOutputRetries is how many times a run asks the model again for an
// answer that failed the output schema, unless WithOutputRetries says
// otherwise.
const defaultOutputRetries = 2

// OutputMode is how a run obtains an answer matching its output schema.
type OutputMode string

// Output modes. The zero value lets the run choose: the model's own choice
// if it implements OutputModer, else OutputNative.
const (
	OutputAuto OutputMode = ""
	// OutputNative uses the provider's structured-output feature: the schema
	// travels in ModelRequest.OutputSchema (OpenAI response_format / text.format
	// json_schema, Anthropic output_config.format) and the answer is text.
	OutputNative OutputMode = "native"
	// OutputTool offers an extra tool, "final_answer", whose input schema is
	// the output schema, and makes the model call a tool (that one, when the
	// agent has no other tools). The call's arguments are the answer. An
	// agent may not have a tool of that name.
	OutputTool OutputMode = "tool"
	// OutputPrompted appends the schema to the instructions and reads the
	// answer from the text: the last resort for servers without either.
	OutputPrompted OutputMode = "prompted"
)

// outputToolName is the name of the tool that carries the answer in
// OutputTool mode.
const outputToolName = "final_answer"

// OutputModer is an optional interface of a Model: it says which mode suits
// it for schema s (OutputAuto for "no preference"). The OpenAI and Anthropic
// adapters implement it from the model name and server preset; a Fallback
// model answers with a mode all its models support.
type OutputModer interface {
	OutputMode(s *OutputSchema) OutputMode
}

// OutputFor returns an OutputSchema inferred from T, as NewTool infers input
// schemas: field names from json tags, descriptions from `jsonschema:"..."`
// tags, pointer fields nullable. Its Name is T's name. Use it for
// Agent.OutputSchema, or let RunAs infer it. Each call returns a new
// OutputSchema (set its Description or Mode freely), but the Schema is
// inferred once per type and shared: do not modify it.
//
// OutputFor panics if T's schema cannot be inferred (a programming error,
// such as a channel field), as SchemaFor does; RunAs returns that error
// instead.
func OutputFor[T any]() *OutputSchema {
	s, err := outputFor[T]()
	if err != nil {
		panic(err)
	}
	return s
}

// outputFor is OutputFor returning an error instead of panicking.
func outputFor[T any]() (*OutputSchema, error) {
	t := reflect.TypeFor[T]()
	v, ok := inferred.Load(t)
	if !ok {
		sch, err := jsonschema.ForType(t, nil)
		if err != nil {
			return nil, fmt.Errorf("runlet: output schema for %v: %w", t, err)
		}
		v, _ = inferred.LoadOrStore(t, sch)
	}
	return &OutputSchema{Name: schemaName(t), Schema: v.(*jsonschema.Schema)}, nil
}

var inferred sync.Map // reflect.Type → *jsonschema.Schema

// schemaName is t's name reduced to what every provider accepts as a schema
// or tool name ([a-zA-Z0-9_-], at most 64 bytes), or "output".
func schemaName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, t.Name())
	name = strings.Trim(name, "_")
	if name == "" {
		return "output"
	}
	return name[:min(len(name), 64)]
}

// WithOutputSchema asks for a final answer matching s in this run, instead
// of the agent's OutputSchema.
func WithOutputSchema(s *OutputSchema) RunOption {
	return runOption(func(c *runConfig) { c.output.schema = s })
}

// WithOutputMode overrides the output mode the run would choose.
func WithOutputMode(m OutputMode) RunOption {
	return runOption(func(c *runConfig) { c.output.mode = m })
}

// WithOutputRetries sets how many times an answer that is not valid JSON,
// breaks the schema or does not decode is sent back to the model with the
// errors (2 if unset; negative: never). These calls count
// in usage, limits and events like any other.
func WithOutputRetries(n int) RunOption {
	return runOption(func(c *runConfig) { c.output.retries, c.output.retriesSet = n, true })
}

// outputConfig is the part of runConfig the output options set.
type outputConfig struct {
	schema     *OutputSchema
	mode       OutputMode
	retries    int
	retriesSet bool
	// decode, set by RunAs, decodes a valid answer into the caller's value;
	// its error is sent back to the model like a schema violation.
	decode func(json.RawMessage) error
	// value, set by RunAs, is the caller's *T the answer decodes into,
	// which Output guardrails see (GuardrailOutput.Value).
	value any
}

// OutputError ends a run whose answer still failed the output schema after
// the last retry. Raw is the last answer as the model gave it; Errors say
// what was wrong with it.
type OutputError struct {
	Mode     OutputMode
	Raw      string
	Errors   []string
	Attempts int // answers checked, the first included
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("runlet: invalid output after %d attempts (%s mode): %s", e.Attempts, e.Mode, strings.Join(e.Errors, "; "))
}

// RefusalError ends a run asking for structured output whose model refused
// to answer. Text is the model's explanation.
type RefusalError struct {
	Text string
}

func (e *RefusalError) Error() string { return "runlet: the model refused: " + e.Text }

// TypedResult is a Result with the final answer decoded.
type TypedResult[T any] struct {
	*Result
	// Value is the answer, validated against the schema and decoded.
	Value T
}

// RunAs runs agent and returns its final answer decoded into T:
//
//	res, err := runlet.RunAs[Invoice](ctx, rt, agent, text)
//	fmt.Println(res.Value.Total)
//
// The schema is the agent's OutputSchema or, without one, inferred from T
// (see OutputFor). The answer is validated against it and decoded; an
// invalid answer goes back to the model with the errors, up to the output
// retries, then the run fails with an *OutputError. A refusal fails with a
// *RefusalError. Result.Output holds the answer's JSON text. On failure the
// returned TypedResult carries the partial Result, as Run's does.
func RunAs[T any](ctx context.Context, rt *Runtime, agent *Agent, input string, opts ...RunOption) (*TypedResult[T], error) {
	out := new(TypedResult[T])
	opts, err := typedOptions(agent, &out.Value, opts)
	if err != nil {
		out.Result = &Result{Status: StateFailed}
		return out, err
	}
	out.Result, err = rt.Run(ctx, agent, input, opts...)
	return out, err
}

// ResumeAs is Runtime.Resume for a run started with RunAs.
func ResumeAs[T any](ctx context.Context, rt *Runtime, agent *Agent, runID string, decisions ...Decision) (*TypedResult[T], error) {
	out := new(TypedResult[T])
	opts, err := typedOptions(agent, &out.Value, nil)
	if err != nil {
		out.Result = &Result{RunID: runID, Status: StateFailed}
		return out, err
	}
	r := rt.resumeRun(agent, runID, decisions, nil)
	for _, o := range opts {
		o.applyRun(&r.cfg)
	}
	r.start(ctx)
	out.Result, err = r.result, r.err
	return out, err
}

// typedOptions prepends to opts the options that make a run answer in T and
// decode into v.
func typedOptions[T any](agent *Agent, v *T, opts []RunOption) ([]RunOption, error) {
	var s *OutputSchema
	if agent == nil || agent.OutputSchema == nil {
		var err error
		if s, err = outputFor[T](); err != nil {
			return nil, err
		}
	}
	decode := func(raw json.RawMessage) error {
		var fresh T
		if err := json.Unmarshal(raw, &fresh); err != nil {
			return err
		}
		*v = fresh
		return nil
	}
	own := runOption(func(c *runConfig) {
		if s != nil && c.output.schema == nil {
			c.output.schema = s
		}
		c.output.decode, c.output.value = decode, v
	})
	// own runs last, so a WithOutputSchema in opts wins over the inferred one.
	return append(append(make([]RunOption, 0, len(opts)+1), opts...), own), nil
}

// OutputMode implements OutputModer: the mode every model of the chain can
// use. Native if all want it, else tool if none needs prompted JSON, else
// prompted.
func (f *fallback) OutputMode(s *OutputSchema) OutputMode {
	mode := OutputNative
	for _, m := range f.models {
		switch modeOf(m, s) {
		case OutputPrompted:
			return OutputPrompted
		case OutputTool:
			mode = OutputTool
		}
	}
	return mode
}

// modeOf is the mode m prefers for s.
func modeOf(m Model, s *OutputSchema) OutputMode {
	if om, ok := m.(OutputModer); ok {
		if mode := om.OutputMode(s); mode != OutputAuto {
			return mode
		}
	}
	return OutputNative
}

func checkMode(m OutputMode) error {
	switch m {
	case OutputAuto, OutputNative, OutputTool, OutputPrompted:
		return nil
	}
	return errors.New("runlet: unknown output mode " + string(m))
}
