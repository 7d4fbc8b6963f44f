package runlet_test

import (
	"context"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// encoding/json fills a struct field from a property of any case, the
// last one winning; a schema checks names as written. With a hand-written
// schema that allows other properties, "PATH" (or "Path", or "N") would
// skip the checks on "path" (or "n") and still reach the tool. Such
// arguments are refused as invalid; exact names pass.
func TestArgumentNamesDifferingInCaseAreRefused(t *testing.T) {
	type in struct {
		Path string `json:"path"`
		N    int    `json:"n,omitempty"`
		Sub  struct {
			Mode string `json:"mode,omitempty"`
		} `json:"sub"`
	}
	s := runlet.SchemaFor[in]()
	s.AdditionalProperties = nil // other properties allowed, as in most hand-written schemas
	s.Properties["path"].Enum = []any{"safe"}
	five := 5.0
	s.Properties["n"].Maximum = &five
	s.Properties["sub"].AdditionalProperties = nil
	s.Properties["sub"].Properties["mode"].Enum = []any{"read"}
	ran := ""
	tool := runlet.NewTool("t", "d", func(ctx context.Context, v in) (string, error) {
		ran = v.Path + v.Sub.Mode
		return "ok", nil
	}, runlet.WithInputSchema(s))
	rt := runlet.NewRuntime()
	for _, tc := range []struct{ args, want string }{
		{`{"path":"safe","sub":{"mode":"read"}}`, "saferead"},
		{`{"path":"safe","PATH":"evil","sub":{}}`, ""},
		{`{"PATH":"evil","path":"safe","sub":{}}`, ""},
		{`{"Path":"evil","sub":{}}`, ""},
		{`{"path":"safe","N":99,"sub":{}}`, ""},
		{`{"path":"safe","sub":{"mode":"read","MODE":"write"}}`, ""},
	} {
		ran = ""
		res, kind := rt.CallTool(context.Background(), tool, runlet.ToolCallPart{ID: "1", Name: "t", Arguments: []byte(tc.args)})
		if ran != tc.want {
			t.Errorf("%s: the tool got %q, want %q (%v: %s)", tc.args, ran, tc.want, kind, res.Content)
		}
		if tc.want == "" && kind != runlet.ToolInvalidArgs {
			t.Errorf("%s: kind %v, want %v", tc.args, kind, runlet.ToolInvalidArgs)
		}
	}
}

// A typed answer is decoded the same way, so the same names are refused
// there (and repaired): under a schema that allows other properties,
// "CURRENCY" would otherwise skip currency's enum.
func TestAnswerNamesDifferingInCaseAreRepaired(t *testing.T) {
	out := runlet.OutputFor[invoice]()
	out.Schema.AdditionalProperties = nil
	out.Schema.Properties["currency"].Enum = []any{"EUR"}
	m := runlettest.NewModel(
		runlettest.TextReply(`{"number":"A-1","total":1,"currency":"EUR","CURRENCY":"USD"}`),
		runlettest.TextReply(`{"number":"A-1","total":1,"currency":"EUR"}`),
	)
	agent := &runlet.Agent{Name: "x", Model: m, OutputSchema: out}
	res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "extract")
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Currency != "EUR" || len(m.Requests()) != 2 {
		t.Fatalf("currency %q after %d requests, want EUR after a repair", res.Value.Currency, len(m.Requests()))
	}
}
