package runlettest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A request an adapter cannot build (an option of the wrong type, a part
// its API does not take) is the same typed error in every adapter, from
// Generate and from Stream, before anything is sent; and Fallback treats it
// the same way whichever adapter failed: the next model gets the request.
func TestInvalidRequestIsOneErrorEverywhere(t *testing.T) {
	bad := map[string]*runlet.ModelRequest{
		"option of the wrong type":   {Messages: []runlet.Message{runlet.UserText("hi")}, Options: map[string]any{"model": 42}},
		"part the API does not take": {Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.ImagePart{}}}}},
	}
	for _, c := range wireCases(t) {
		for what, req := range bad {
			t.Run(c.name+"/"+what, func(t *testing.T) {
				_, genErr := c.model.Generate(context.Background(), req)
				var streamErr error
				for _, err := range c.model.Stream(context.Background(), req) {
					if err != nil {
						streamErr = err
					}
				}
				for _, err := range []error{genErr, streamErr} {
					var pe *runlet.ProviderError
					if !errors.Is(err, runlet.ErrInvalidRequest) || !errors.As(err, &pe) || pe.Retryable || pe.StatusCode != 0 || pe.Message == "" {
						t.Errorf("err = %#v", err)
					}
				}
				if n := len(c.srv.Requests()); n != 0 {
					t.Errorf("%d requests sent", n)
				}
				next := runlettest.NewModel(runlettest.Reply{Response: &runlet.ModelResponse{Message: runlet.AssistantText("from the next model")}})
				got, err := runlet.Fallback(c.model, next).Generate(context.Background(), req)
				if err != nil || got.Message.Text() != "from the next model" {
					t.Errorf("fallback: %v, %v", got, err)
				}
			})
		}
	}
}
