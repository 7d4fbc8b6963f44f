// Command structured extracts a typed record from free text: the answer
// comes back as a Go value, validated against the schema inferred from the
// type, and is shown filling in while it streams.
//
//	go run ./examples/structured                       # offline: a fake OpenAI server answers
//	OPENAI_API_KEY=sk-... go run ./examples/structured "Order 7 from Ada..."
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/structured
//
// Offline, the fake server's first answer misses a required field, so the
// run sends the validation error back and the model answers again — the
// repair every run does, bounded by WithOutputRetries.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// Order is the record to extract. json tags name the fields, jsonschema tags
// describe them to the model; omitempty fields are optional.
type Order struct {
	Customer string  `json:"customer" jsonschema:"the customer's full name"`
	Email    string  `json:"email,omitempty" jsonschema:"the customer's email address, if given"`
	Items    []Item  `json:"items" jsonschema:"what was ordered"`
	Total    float64 `json:"total" jsonschema:"the order total"`
	Currency string  `json:"currency" jsonschema:"ISO 4217 code, such as EUR"`
}

// Item is one line of an Order.
type Item struct {
	Product  string `json:"product"`
	Quantity int    `json:"quantity"`
}

const defaultText = `Hi! This is Ada Lovelace (ada@example.com). Please send me 2 analytical
engines and 1 box of punch cards. I transferred 1250.50 euros yesterday.`

// The offline answers: the first lacks "currency", the second is complete.
const (
	offlineInvalid = `{"customer":"Ada Lovelace","email":"ada@example.com","items":[{"product":"analytical engine","quantity":2},{"product":"punch cards (box)","quantity":1}],"total":1250.5}`
	offlineValid   = `{"customer":"Ada Lovelace","email":"ada@example.com","items":[{"product":"analytical engine","quantity":2},{"product":"punch cards (box)","quantity":1}],"total":1250.5,"currency":"EUR"}`
)

func main() {
	text := strings.Join(os.Args[1:], " ")
	if err := run(context.Background(), text, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "structured:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, text string, getenv func(string) string, stdout, stderr io.Writer) error {
	text = cmp.Or(text, defaultText)
	var model runlet.Model
	switch {
	case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "":
		model = openai.NewChatCompletions(openai.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "gpt-4o-mini")})
	case getenv("ANTHROPIC_API_KEY") != "":
		model = anthropic.NewMessages(anthropic.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "claude-sonnet-4-5")})
	default:
		fmt.Fprintln(stderr, "No OPENAI_API_KEY or ANTHROPIC_API_KEY: a fake OpenAI server answers (offline).")
		srv := runlettest.NewOpenAIChatServer()
		defer srv.Close()
		srv.EnqueueReplies(runlettest.WireReply{Text: offlineInvalid}, runlettest.WireReply{Text: offlineValid})
		model = openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "offline", Model: "gpt-4o-mini"})
	}

	agent := &runlet.Agent{
		Name:         "order-extractor",
		Instructions: "Extract the order from the customer's message.",
		Model:        model,
	}
	// StreamAs streams the run; Events shows what happens, and each
	// OutputPartial is the order as far as it has arrived.
	s := runlet.StreamAs[Order](ctx, runlet.NewRuntime(), agent, text)
	for ev, err := range s.Events() {
		if err != nil {
			break // Result reports it
		}
		switch ev := ev.(type) {
		case *runlet.OutputPartial:
			p := runlet.DecodePartial[Order](ev)
			fmt.Fprintf(stderr, "\r\033[K… %s: %d item(s)", cmp.Or(p.Customer, "?"), len(p.Items))
		case *runlet.OutputChecked:
			fmt.Fprint(stderr, "\r\033[K")
			if ev.Valid {
				fmt.Fprintf(stderr, "answer %d valid (%s mode)\n", ev.Attempt, ev.Mode)
			} else {
				fmt.Fprintf(stderr, "answer %d rejected, asking again: %s\n", ev.Attempt, strings.Join(ev.Errors, "; "))
			}
		}
	}
	res, err := s.Result()
	if err != nil {
		return err
	}
	order := res.Value // a typed Order
	fmt.Fprintf(stdout, "%s ordered %d line(s), %.2f %s in total:\n", order.Customer, len(order.Items), order.Total, order.Currency)
	for _, it := range order.Items {
		fmt.Fprintf(stdout, "  %d × %s\n", it.Quantity, it.Product)
	}
	out, _ := json.MarshalIndent(order, "", "  ")
	fmt.Fprintf(stdout, "%s\n", out)
	return nil
}
