package modeltest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// wantProviderError fails the test unless err is a *runlet.ProviderError
// wrapping target.
func wantProviderError(t testing.TB, what string, err, target error) {
	t.Helper()
	noKey(t, what, err)
	var perr *runlet.ProviderError
	if !errors.As(err, &perr) || !errors.Is(err, target) {
		t.Errorf("%s: %v (%T), want a *runlet.ProviderError wrapping %v", what, err, err, target)
	}
}

func wireErrors(t testing.TB, h *harness) {
	// A request the adapter cannot build is never sent.
	invalid := request()
	invalid.Reasoning.Effort = "extreme"
	_, err := h.model.Generate(h.ctx(), invalid)
	wantProviderError(t, "Generate with an invalid request", err, runlet.ErrInvalidRequest)
	s := drain(t, "Stream with an invalid request", h.model.Stream(h.ctx(), invalid), nil)
	wantProviderError(t, "Stream with an invalid request", s.err, runlet.ErrInvalidRequest)
	checkTerminal(t, "Stream with an invalid request", s)
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("an invalid request was sent (%d requests)", n)
	}

	// A stream cut off after its first deltas, cleanly or not.
	for _, f := range []runlettest.Fault{{Truncate: true, AfterEvents: stallAt}, {Reset: true, AfterEvents: stallAt}} {
		what := fmt.Sprintf("stream cut after %d events (%+v)", stallAt, f)
		h.srv.EnqueueReplies(longReply())
		h.srv.InjectFault(f)
		s := drain(t, what, h.model.Stream(h.ctx(), request()), nil)
		if len(s.deltas) == 0 {
			t.Errorf("%s: no delta before the cut", what)
		}
		wantProviderError(t, what, s.err, runlet.ErrStreamIncomplete)
		checkTerminal(t, what, s)
	}

	// A non-streamed body cut off halfway.
	h.srv.EnqueueReplies(longReply())
	h.srv.InjectFault(runlettest.Fault{Truncate: true})
	_, err = h.model.Generate(h.ctx(), request())
	wantProviderError(t, "Generate of a body cut off halfway", err, runlet.ErrStreamIncomplete)

	// A response past the limit.
	big := runlettest.WireReply{Text: strings.Repeat("x", 3*maxResponseBytes)}
	h.srv.EnqueueReplies(big, big)
	_, err = h.model.Generate(h.ctx(), request())
	wantProviderError(t, "Generate of an oversized response", err, runlet.ErrResponseTooLarge)
	s = drain(t, "Stream of an oversized response", h.model.Stream(h.ctx(), request()), nil)
	wantProviderError(t, "Stream of an oversized response", s.err, runlet.ErrResponseTooLarge)
	checkTerminal(t, "Stream of an oversized response", s)
	h.watch.waitClosed(t, "Errors")
}

func wireCredentials(t testing.TB, h *harness) {
	// A wrong key: the server refuses it.
	wrong := h.newModel(Server{BaseURL: h.srv.BaseURL(), APIKey: testKey + "-wrong", HTTPClient: &http.Client{Transport: h.watch}, MaxResponseBytes: maxResponseBytes})
	_, err := wrong.Generate(h.ctx(), request())
	if err == nil {
		t.Error("Generate with a wrong key: no error (does the model send Server.APIKey the way its wire expects?)")
	}
	noKey(t, "Generate with a wrong key", err)

	// Servers that echo the key, in an error body or a mid-stream error.
	echoes := []runlettest.Fault{
		{Status: http.StatusUnauthorized, Header: http.Header{"Content-Type": {"application/json"}},
			Body: `{"type":"error","error":{"type":"authentication_error","message":"Incorrect API key provided: ` + testKey + `","status":"UNAUTHENTICATED"}}`},
		{Status: http.StatusBadRequest, Body: "bad key " + testKey},
	}
	for i, f := range echoes {
		h.srv.InjectFault(f)
		_, err := h.model.Generate(h.ctx(), request())
		if err == nil {
			t.Errorf("Generate, echo %d: no error", i)
		}
		noKey(t, fmt.Sprintf("Generate, echo %d", i), err)
		h.srv.InjectFault(f)
		s := drain(t, fmt.Sprintf("Stream, echo %d", i), h.model.Stream(h.ctx(), request()), nil)
		if s.err == nil {
			t.Errorf("Stream, echo %d: no error", i)
		}
	}
	r := longReply()
	r.Error, r.ErrorAfter = &runlettest.WireError{Type: "invalid_request_error", Message: "key " + testKey + " revoked"}, stallAt
	h.srv.EnqueueReplies(r)
	s := drain(t, "stream with an error event echoing the key", h.model.Stream(h.ctx(), request()), nil)
	if s.err == nil {
		t.Error("stream with an error event echoing the key: no error")
	}
	h.watch.waitClosed(t, "Credentials")
}
