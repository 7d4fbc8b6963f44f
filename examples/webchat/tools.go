package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/runlet/runlet"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"the city, such as Paris"`
}

type noteArgs struct {
	Text string `json:"text" jsonschema:"the note to save"`
}

// tools are the agent's: get_weather takes a moment (wait), so the page
// shows it running; save_note needs a person's approval on the page.
func tools(wait func(context.Context) error) []runlet.Tool {
	weather := runlet.NewTool("get_weather", "Returns the current weather in a city.",
		func(ctx context.Context, in weatherArgs) (string, error) {
			if err := wait(ctx); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s: sunny, 21 °C", titleCase(in.City)), nil
		})
	note := runlet.NewTool("save_note", "Saves a short note for the user.",
		func(ctx context.Context, in noteArgs) (string, error) {
			return "saved: " + in.Text, nil // an example: nothing is stored
		}, runlet.WithApproval())
	return []runlet.Tool{weather, note}
}

func titleCase(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// weatherWait is the weather service's latency: a moment, or, when a test
// set weatherGate, until the test closes it.
func (a *app) weatherWait(ctx context.Context) error {
	delay := time.After(700 * time.Millisecond) // a slow weather service
	if a.weatherGate != nil {
		delay = nil
	}
	select {
	case <-delay:
	case <-a.weatherGate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
