package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

type invoice struct {
	Number   string   `json:"number" jsonschema:"the invoice number"`
	Total    float64  `json:"total"`
	Currency string   `json:"currency,omitempty"`
	Lines    []string `json:"lines,omitempty"`
}

const validInvoice = `{"number":"A-17","total":12.5,"currency":"EUR","lines":["tea","cake"]}`

func refusalReply(text string) runlettest.Reply {
	r := runlettest.TextReply(text)
	r.Response.FinishReason = runlet.FinishRefusal
	return r
}

func drain(t *testing.T, seq func(func(runlet.Event, error) bool)) ([]runlet.Event, error) {
	t.Helper()
	var evs []runlet.Event
	var last error
	for ev, err := range seq {
		evs = append(evs, ev)
		last = err
	}
	return evs, last
}

func eventsOf[E runlet.Event](evs []runlet.Event) []E {
	var out []E
	for _, ev := range evs {
		if e, ok := ev.(E); ok {
			out = append(out, e)
		}
	}
	return out
}

func TestRunAsNative(t *testing.T) {
	m := runlettest.NewModel(runlettest.TextReply("\n" + validInvoice + "\n"))
	agent := &runlet.Agent{Name: "x", Model: m}
	res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "extract")
	if err != nil {
		t.Fatal(err)
	}
	want := invoice{Number: "A-17", Total: 12.5, Currency: "EUR", Lines: []string{"tea", "cake"}}
	if !equalInvoice(res.Value, want) {
		t.Fatalf("value = %+v", res.Value)
	}
	if res.Output != validInvoice || res.Status != runlet.StateFinished {
		t.Fatalf("output %q status %s", res.Output, res.Status)
	}
	req := m.Requests()[0]
	if req.OutputSchema == nil || req.OutputSchema.Mode != runlet.OutputNative || req.OutputSchema.Name != "invoice" {
		t.Fatalf("request output schema = %+v", req.OutputSchema)
	}
	if d := req.OutputSchema.Schema.Properties["number"].Description; d != "the invoice number" {
		t.Fatalf("description %q", d)
	}
	if len(req.Tools) != 0 {
		t.Fatalf("native mode sent tools %v", req.Tools)
	}
}

func equalInvoice(a, b invoice) bool {
	return a.Number == b.Number && a.Total == b.Total && a.Currency == b.Currency && slices.Equal(a.Lines, b.Lines)
}

func TestRunAsRepairsInvalidAnswer(t *testing.T) {
	m := runlettest.NewModel(
		runlettest.TextReply("Sure! "+validInvoice),
		runlettest.TextReply(`{"number":"A-17"}`),
		runlettest.TextReply(validInvoice),
	)
	agent := &runlet.Agent{Name: "x", Model: m}
	rt := runlet.NewRuntime()
	var checks []*runlet.OutputChecked
	evs, err := drain(t, runlet.StreamAs[invoice](context.Background(), rt, agent, "extract").Events())
	if err != nil {
		t.Fatal(err)
	}
	checks = eventsOf[*runlet.OutputChecked](evs)
	if len(checks) != 3 || checks[0].Valid || !checks[0].Retrying || checks[1].Valid || !checks[2].Valid || checks[2].Attempt != 3 {
		t.Fatalf("checks = %+v", checks)
	}
	if !strings.Contains(checks[0].Errors[0], "not valid JSON") || !strings.Contains(checks[1].Errors[0], "total") {
		t.Fatalf("errors = %q / %q", checks[0].Errors, checks[1].Errors)
	}
	reqs := m.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The retry sees the bad answer and a message saying what was wrong.
	msgs := reqs[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != runlet.RoleUser || !strings.Contains(last.Text(), "not valid JSON") || msgs[len(msgs)-2].Text() != "Sure! "+validInvoice {
		t.Fatalf("repair messages = %+v", msgs)
	}
	fin := evs[len(evs)-1].(*runlet.RunFinished)
	if fin.Result.Usage.Requests != 3 || fin.Result.Turns != 3 || fin.Result.Output != validInvoice {
		t.Fatalf("result = %+v", fin.Result)
	}
}

func TestRunAsRetriesExhausted(t *testing.T) {
	m := runlettest.NewModel(runlettest.TextReply("no"), runlettest.TextReply(`{"total":"many"}`))
	agent := &runlet.Agent{Name: "x", Model: m}
	res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "extract", runlet.WithOutputRetries(1))
	var oe *runlet.OutputError
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v", err)
	}
	if oe.Raw != `{"total":"many"}` || oe.Attempts != 2 || len(oe.Errors) == 0 || oe.Mode != runlet.OutputNative {
		t.Fatalf("output error = %+v", oe)
	}
	if res.Status != runlet.StateFailed || res.Usage.Requests != 2 {
		t.Fatalf("result = %+v", res.Result)
	}
}

func TestRunAsRetriesCountAgainstLimits(t *testing.T) {
	m := runlettest.NewModel(runlettest.TextReply("no"), runlettest.TextReply("no"))
	agent := &runlet.Agent{Name: "x", Model: m}
	_, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "x",
		runlet.WithLimits(runlet.UsageLimits{Requests: 1}))
	if !errors.Is(err, runlet.ErrUsageLimit) {
		t.Fatalf("err = %v", err)
	}
}

func TestRunAsRefusal(t *testing.T) {
	m := runlettest.NewModel(refusalReply("I can't help with that."))
	agent := &runlet.Agent{Name: "x", Model: m}
	evs, err := drain(t, runlet.StreamAs[invoice](context.Background(), runlet.NewRuntime(), agent, "x").Events())
	var re *runlet.RefusalError
	if !errors.As(err, &re) || re.Text != "I can't help with that." {
		t.Fatalf("err = %v", err)
	}
	if f := evs[len(evs)-1].(*runlet.RunFailed); f.ErrorType != "refusal" {
		t.Fatalf("error type %q", f.ErrorType)
	}
	if len(m.Requests()) != 1 {
		t.Fatal("a refusal was retried")
	}
}

func TestRunAsToolMode(t *testing.T) {
	m := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "final_answer", validInvoice)))
	agent := &runlet.Agent{Name: "x", Model: m}
	res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "x", runlet.WithOutputMode(runlet.OutputTool))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Number != "A-17" || res.Output != validInvoice {
		t.Fatalf("value %+v output %q", res.Value, res.Output)
	}
	req := m.Requests()[0]
	if req.OutputSchema != nil || len(req.Tools) != 1 || req.Tools[0].Name != "final_answer" ||
		req.ToolChoice != (runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "final_answer"}) {
		t.Fatalf("request: schema %v tools %v choice %v", req.OutputSchema, req.Tools, req.ToolChoice)
	}
	// The stored answer is the JSON text, not a dangling tool call.
	last := res.Messages[len(res.Messages)-1]
	if len(last.ToolCalls()) != 0 || last.Text() != validInvoice {
		t.Fatalf("last message = %+v", last)
	}
}

func TestRunAsToolsThenTypedAnswer(t *testing.T) {
	for _, mode := range []runlet.OutputMode{runlet.OutputNative, runlet.OutputTool, runlet.OutputPrompted} {
		t.Run(string(mode), func(t *testing.T) {
			final := runlettest.TextReply(validInvoice)
			if mode == runlet.OutputTool {
				final = runlettest.ToolCallReply(
					runlettest.Call("c2", "final_answer", `{"number":"A-17"}`), // invalid: no total
				)
			}
			m := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "weather", `{"city":"Paris"}`)), final)
			if mode == runlet.OutputTool {
				m.Push(runlettest.ToolCallReply(runlettest.Call("c3", "final_answer", validInvoice)))
			}
			agent := &runlet.Agent{Name: "x", Model: m, Tools: []runlet.Tool{weatherTool()}}
			agent.OutputSchema = &runlet.OutputSchema{Name: "inv", Schema: runlet.OutputFor[invoice]().Schema, Mode: mode}
			res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "x")
			if err != nil {
				t.Fatal(err)
			}
			if res.Value.Total != 12.5 {
				t.Fatalf("value %+v", res.Value)
			}
			reqs := m.Requests()
			if mode == runlet.OutputTool {
				if reqs[0].ToolChoice.Mode != runlet.ToolChoiceRequired || len(reqs[0].Tools) != 2 {
					t.Fatalf("tool choice %v tools %d", reqs[0].ToolChoice, len(reqs[0].Tools))
				}
				// The invalid output call got an is-error result naming the problem.
				msgs := reqs[2].Messages
				tr := msgs[len(msgs)-1].Parts[0].(runlet.ToolResultPart)
				if !tr.IsError || tr.CallID != "c2" || !strings.Contains(tr.Content, "total") {
					t.Fatalf("repair result = %+v", tr)
				}
			}
			if mode == runlet.OutputPrompted && !strings.Contains(reqs[0].Instructions, `"total"`) {
				t.Fatalf("prompted instructions = %q", reqs[0].Instructions)
			}
		})
	}
}

func TestRunAsPromptedFence(t *testing.T) {
	m := runlettest.NewModel(runlettest.TextReply("```json\n" + validInvoice + "\n```"))
	agent := &runlet.Agent{Name: "x", Instructions: "Be exact.", Model: m}
	res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "x", runlet.WithOutputMode(runlet.OutputPrompted))
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != validInvoice {
		t.Fatalf("output %q", res.Output)
	}
	req := m.Requests()[0]
	if req.OutputSchema != nil || !strings.HasPrefix(req.Instructions, "Be exact.\n\nAnswer with only a JSON value") {
		t.Fatalf("request %+v", req)
	}
}

func TestRunAsNonObjectIsWrapped(t *testing.T) {
	m := runlettest.NewModel(runlettest.TextReply(`{"value":["a","b"]}`))
	agent := &runlet.Agent{Name: "x", Model: m}
	res, err := runlet.RunAs[[]string](context.Background(), runlet.NewRuntime(), agent, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Value, []string{"a", "b"}) || res.Output != `["a","b"]` {
		t.Fatalf("value %v output %q", res.Value, res.Output)
	}
	s := m.Requests()[0].OutputSchema.Schema
	if s.Type != "object" || s.Properties["value"] == nil || s.Required[0] != "value" {
		t.Fatalf("sent schema %+v", s)
	}
}

func TestRunAsOptionalNullsAccepted(t *testing.T) {
	// Strict modes send null for optional fields.
	m := runlettest.NewModel(runlettest.TextReply(`{"number":"A","total":1,"currency":null,"lines":null}`))
	res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), &runlet.Agent{Name: "x", Model: m}, "x")
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Currency != "" || res.Value.Number != "A" {
		t.Fatalf("value %+v", res.Value)
	}
}

type strictNumber struct{ N int }

func (s *strictNumber) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &s.N); err != nil {
		return err
	}
	if s.N%2 != 0 {
		return errors.New("n must be even")
	}
	return nil
}

func TestRunAsDecodeErrorIsRepaired(t *testing.T) {
	// A hand-written schema looser than the Go type: the decode error goes
	// back to the model.
	m2 := runlettest.NewModel(runlettest.TextReply(`{"value":3}`), runlettest.TextReply(`{"value":4}`))
	agent := &runlet.Agent{Name: "x", Model: m2, OutputSchema: &runlet.OutputSchema{Name: "n", Schema: &jsonschema.Schema{Type: "integer"}}}
	res, err := runlet.RunAs[strictNumber](context.Background(), runlet.NewRuntime(), agent, "x")
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.N != 4 {
		t.Fatalf("value %+v", res.Value)
	}
	msgs := m2.Requests()[1].Messages
	if !strings.Contains(msgs[len(msgs)-1].Text(), "n must be even") {
		t.Fatalf("repair = %q", msgs[len(msgs)-1].Text())
	}
}

func TestRunValidatesAgentOutputSchema(t *testing.T) {
	// Plain Run with Agent.OutputSchema validates too; Output is the JSON.
	m := runlettest.NewModel(runlettest.TextReply("Here you go: {}"), runlettest.TextReply(validInvoice))
	agent := &runlet.Agent{Name: "x", Model: m, OutputSchema: runlet.OutputFor[invoice]()}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "x")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != validInvoice || res.Turns != 2 {
		t.Fatalf("result %+v", res)
	}
}

func TestRunAsSessionStoresJSON(t *testing.T) {
	store := runlet.NewMemoryStore()
	rt := runlet.NewRuntime(runlet.WithStore(store))
	m := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "final_answer", validInvoice)), runlettest.TextReply("ok"))
	agent := &runlet.Agent{Name: "x", Model: m}
	if _, err := runlet.RunAs[invoice](context.Background(), rt, agent, "x", runlet.WithSession("s"), runlet.WithOutputMode(runlet.OutputTool)); err != nil {
		t.Fatal(err)
	}
	hist, err := store.LoadSession(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[1].Text() != validInvoice {
		t.Fatalf("session = %+v", hist)
	}
	// A later plain run on the session works: no dangling output call.
	if _, err := rt.Run(context.Background(), agent, "thanks", runlet.WithSession("s")); err != nil {
		t.Fatal(err)
	}
}

func TestStreamAsPartials(t *testing.T) {
	for _, mode := range []runlet.OutputMode{runlet.OutputNative, runlet.OutputTool, runlet.OutputPrompted} {
		t.Run(string(mode), func(t *testing.T) {
			reply := runlettest.TextReply(validInvoice)
			if mode == runlet.OutputTool {
				reply = runlettest.ToolCallReply(runlettest.Call("c1", "final_answer", validInvoice))
			}
			m := runlettest.NewModel(reply)
			m.ChunkSize = 3
			s := runlet.StreamAs[invoice](context.Background(), runlet.NewRuntime(), &runlet.Agent{Name: "x", Model: m}, "x", runlet.WithOutputMode(mode))
			var seen []invoice
			for v := range s.Partials() {
				seen = append(seen, v)
			}
			res, err := s.Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) < 5 {
				t.Fatalf("only %d partial values", len(seen))
			}
			final := seen[len(seen)-1]
			if !equalInvoice(final, res.Value) || res.Value.Total != 12.5 {
				t.Fatalf("final %+v, result %+v", final, res.Value)
			}
			// Every partial is consistent with the final value: strings are
			// prefixes, lists shorter.
			for _, p := range seen {
				if !strings.HasPrefix(final.Number, p.Number) || !strings.HasPrefix(final.Currency, p.Currency) ||
					len(p.Lines) > len(final.Lines) || p.Total != 0 && p.Total != final.Total {
					t.Fatalf("partial %+v contradicts %+v", p, final)
				}
			}
			if seen[0].Number == "A-17" && seen[0].Total != 0 {
				t.Fatalf("first partial already complete: %+v", seen[0])
			}
		})
	}
}

func TestFallbackOutputMode(t *testing.T) {
	native := runlettest.NewModel()
	tool := modeModel{runlettest.NewModel(), runlet.OutputTool}
	prompted := modeModel{runlettest.NewModel(), runlet.OutputPrompted}
	s := runlet.OutputFor[invoice]()
	for _, c := range []struct {
		models []runlet.Model
		want   runlet.OutputMode
	}{
		{[]runlet.Model{native, native}, runlet.OutputNative},
		{[]runlet.Model{native, tool}, runlet.OutputTool},
		{[]runlet.Model{tool, prompted, native}, runlet.OutputPrompted},
	} {
		if got := runlet.Fallback(c.models...).(runlet.OutputModer).OutputMode(s); got != c.want {
			t.Errorf("%v: mode %s, want %s", c.models, got, c.want)
		}
	}
}

func TestOutputModeFromModel(t *testing.T) {
	inner := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "final_answer", validInvoice)))
	res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), &runlet.Agent{Name: "x", Model: modeModel{inner, runlet.OutputTool}}, "x")
	if err != nil || res.Value.Number != "A-17" {
		t.Fatalf("value %+v err %v", res.Value, err)
	}
}

func TestOutputToolNameClash(t *testing.T) {
	clash := runlet.NewTool("final_answer", "", func(context.Context, struct{}) (string, error) { return "", nil })
	agent := &runlet.Agent{Name: "x", Model: runlettest.NewModel(), Tools: []runlet.Tool{clash}}
	_, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "x", runlet.WithOutputMode(runlet.OutputTool))
	if err == nil || !strings.Contains(err.Error(), "final_answer") {
		t.Fatalf("err = %v", err)
	}
	_, err = runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "x", runlet.WithOutputMode("json"))
	if err == nil {
		t.Fatal("unknown mode accepted")
	}
}

type modeModel struct {
	*runlettest.Model
	mode runlet.OutputMode
}

func (m modeModel) OutputMode(*runlet.OutputSchema) runlet.OutputMode { return m.mode }

func TestOutputEventsRoundTrip(t *testing.T) {
	for _, ev := range []runlet.Event{
		&runlet.OutputPartial{EventHeader: runlet.EventHeader{Type: "output.partial"}, Mode: runlet.OutputTool, Attempt: 1, JSON: json.RawMessage(`{"a":"b"}`)},
		&runlet.OutputChecked{EventHeader: runlet.EventHeader{Type: "output.checked"}, Mode: runlet.OutputNative, Attempt: 2, Errors: []string{"x"}, Retrying: true},
	} {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := runlet.UnmarshalEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(back)
		if string(b) != string(b2) || back.Header().Type != ev.Header().Type {
			t.Fatalf("%s != %s", b, b2)
		}
	}
}

func TestResumeAs(t *testing.T) {
	pay := runlet.NewTool("pay", "pays", func(context.Context, struct{}) (string, error) { return "paid", nil }, runlet.WithApproval())
	m := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "pay", `{}`)),
		runlettest.ToolCallReply(runlettest.Call("c2", "final_answer", validInvoice)),
	)
	agent := &runlet.Agent{Name: "x", Model: modeModel{m, runlet.OutputTool}, Tools: []runlet.Tool{pay}}
	rt := runlet.NewRuntime()
	res, err := runlet.RunAs[invoice](context.Background(), rt, agent, "x")
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("status %s err %v", res.Status, err)
	}
	out, err := runlet.ResumeAs[invoice](context.Background(), rt, agent, res.RunID, runlet.Approve("c1"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Value.Number != "A-17" || out.Status != runlet.StateFinished {
		t.Fatalf("resumed: %+v", out)
	}
	// The resumed run still offered the output tool.
	if reqs := m.Requests(); len(reqs[1].Tools) != 2 || reqs[1].Tools[1].Name != "final_answer" {
		t.Fatalf("resumed request tools %v", reqs[1].Tools)
	}
}

// A schema that refers to itself without going into the value ("r" being
// anyOf [string, r]) is refused before the model is called: validating an
// answer against it overflowed the stack, a fatal error, before.
func TestSchemaRefLoopRefused(t *testing.T) {
	loop := func() *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object",
			Properties: map[string]*jsonschema.Schema{"a": {Ref: "#/$defs/r"}},
			Defs: map[string]*jsonschema.Schema{"r": {AnyOf: []*jsonschema.Schema{
				{Type: "string"}, {Ref: "#/$defs/r"},
			}}}}
	}
	m := runlettest.NewModel(runlettest.TextReply(`{"a":null}`))
	agent := &runlet.Agent{Name: "x", Model: m, OutputSchema: &runlet.OutputSchema{Name: "o", Schema: loop()}}
	_, err := runlet.NewRuntime().Run(context.Background(), agent, "x")
	if err == nil || !strings.Contains(err.Error(), "refers to itself") || len(m.Requests()) != 0 {
		t.Fatalf("err %v after %d model calls", err, len(m.Requests()))
	}
	_, err = runlet.NewToolE("t", "", func(context.Context, struct{}) (string, error) { return "", nil }, runlet.WithInputSchema(loop()))
	if err == nil || !strings.Contains(err.Error(), "refers to itself") {
		t.Fatalf("NewToolE: %v", err)
	}
	// A recursive schema that goes into the value each time is fine.
	tree := &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"root": {Ref: "#/$defs/node"}},
		Defs: map[string]*jsonschema.Schema{"node": {Type: "object", Properties: map[string]*jsonschema.Schema{
			"children": {Type: "array", Items: &jsonschema.Schema{Ref: "#/$defs/node"}},
		}}}}
	m2 := runlettest.NewModel(runlettest.TextReply(`{"root":{"children":[{"children":[]}]}}`))
	agent = &runlet.Agent{Name: "x", Model: m2, OutputSchema: &runlet.OutputSchema{Name: "o", Schema: tree}}
	if _, err := runlet.NewRuntime().Run(context.Background(), agent, "x"); err != nil {
		t.Fatal(err)
	}
}
