package config_test

import (
	"strings"
	"testing"

	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/runlettest"
)

const outputYAML = `
name: extractor
model:
  provider: openai
  name: gpt-4o-mini
  base_url: ${OPENAI_BASE_URL}
output_schema:
  title: contact
  type: object
  properties:
    name: {type: string}
    age: {type: integer, minimum: 0}
  required: [name]
  additionalProperties: false
`

func TestOutputSchema(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer()
	defer srv.Close()
	srv.EnqueueReplies(runlettest.WireReply{Text: `{"name":"Ada","age":-1}`}, runlettest.WireReply{Text: `{"name":"Ada","age":36}`})
	l := &config.Loader{LookupEnv: env("OPENAI_BASE_URL", srv.BaseURL(), "OPENAI_API_KEY", "k")}
	f, err := l.Decode("o.yaml", []byte(outputYAML))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if s := setup.Agent.OutputSchema; s == nil || s.Name != "contact" || s.Schema.Properties["age"].Minimum == nil {
		t.Fatalf("output schema = %+v", s)
	}
	res, err := setup.NewRuntime().Run(t.Context(), setup.Agent, "Ada, 36")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != `{"name":"Ada","age":36}` || res.Turns != 2 {
		t.Fatalf("output %q after %d turns", res.Output, res.Turns)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `"response_format"`) {
		t.Fatal("no response_format sent")
	}
}

func TestOutputSchemaInvalid(t *testing.T) {
	l := &config.Loader{LookupEnv: env("OPENAI_API_KEY", "k")}
	f, err := l.Decode("o.yaml", []byte("model: {provider: openai, name: m}\noutput_schema:\n  type: 7\n"))
	if err == nil {
		_, err = l.Build(f)
	}
	if err == nil || !strings.Contains(err.Error(), "output_schema") {
		t.Fatalf("err = %v", err)
	}
}
