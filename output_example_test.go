package runlet_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// Contact is the record to extract. Field names come from json tags,
// descriptions from jsonschema tags; omitempty fields are optional.
type Contact struct {
	Name  string `json:"name" jsonschema:"full name"`
	Email string `json:"email,omitempty"`
	Age   int    `json:"age,omitempty"`
}

// RunAs asks for a Go value: the schema is inferred from the type, the
// answer validated and decoded. Here the scripted model first answers with
// prose around the JSON, is told what was wrong, and answers again.
func ExampleRunAs() {
	model := runlettest.NewModel(
		runlettest.TextReply(`Sure! {"name": "Ada Lovelace"}`),
		runlettest.TextReply(`{"name": "Ada Lovelace", "email": "ada@example.com", "age": 36}`),
	)
	agent := &runlet.Agent{Name: "extractor", Instructions: "Extract the contact.", Model: model}

	res, err := runlet.RunAs[Contact](context.Background(), runlet.NewRuntime(), agent,
		"Ada Lovelace (36) can be reached at ada@example.com.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v after %d model calls\n", res.Value, res.Turns)
	// Output: {Name:Ada Lovelace Email:ada@example.com Age:36} after 2 model calls
}

// A refusal is not a parse error: it ends the run with a *RefusalError.
func ExampleRefusalError() {
	reply := runlettest.TextReply("I can't share personal data.")
	reply.Response.FinishReason = runlet.FinishRefusal
	agent := &runlet.Agent{Name: "extractor", Model: runlettest.NewModel(reply)}

	_, err := runlet.RunAs[Contact](context.Background(), runlet.NewRuntime(), agent, "...")
	var refusal *runlet.RefusalError
	if errors.As(err, &refusal) {
		fmt.Println("refused:", refusal.Text)
	}
	// Output: refused: I can't share personal data.
}

// StreamAs shows the value while it forms; the last value is the validated
// one.
func ExampleStreamAs() {
	model := runlettest.NewModel(runlettest.TextReply(`{"name": "Ada Lovelace", "age": 36}`))
	model.ChunkSize = 8
	agent := &runlet.Agent{Name: "extractor", Model: model}

	s := runlet.StreamAs[Contact](context.Background(), runlet.NewRuntime(), agent, "...")
	for c := range s.Partials() {
		fmt.Printf("%+v\n", c)
	}
	if _, err := s.Result(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {Name: Email: Age:0}
	// {Name:Ada Lo Email: Age:0}
	// {Name:Ada Lovelace Email: Age:0}
	// {Name:Ada Lovelace Email: Age:36}
	// {Name:Ada Lovelace Email: Age:36}
}
