package uistream

import (
	"context"
	"net/http"
	"slices"

	"github.com/runlet/runlet"
)

// AGUIState shares keys of the session's key-value state with an AG-UI
// page as the protocol's state (see the package documentation).
type AGUIState struct {
	// Store is the Runtime's state store (the one given to
	// runlet.WithStore).
	Store runlet.StateStore
	// Keys are the state keys the page reads and writes, each a member of
	// the AG-UI state object. The page writes them: treat their values as
	// the user's input, never as a grant.
	Keys []string
}

// NewAGUIHandler returns a handler speaking the AG-UI protocol (version
// AGUIProtocolVersion), the one @ag-ui/client's HttpAgent and CopilotKit
// read: it accepts a RunAgentInput, runs or resumes the agent, and
// streams the run as AG-UI events over server-sent events. state, when
// given, shares keys of the session's state with the page. See the
// package documentation for the mapping.
func NewAGUIHandler(o Options, state ...AGUIState) http.Handler {
	var p agui
	for _, s := range state {
		if s.Store != nil {
			p.store = s.Store
		}
		p.keys = append(p.keys, s.Keys...)
	}
	p.keys = slices.Compact(slices.Sorted(slices.Values(p.keys)))
	return newHandler(o, p)
}

// agui is the AG-UI protocol.
type agui struct {
	store runlet.StateStore
	keys  []string
}

func (agui) decode(body []byte) (*turn, error) {
	in, t, err := decodeAGUI(body)
	if err != nil {
		return nil, err
	}
	t.wire = in
	return t, nil
}

func (agui) header(h http.Header) { setSSEHeaders(h) }

func (p agui) encoder(ctx context.Context, t *turn, o *Options) encoder {
	e := newAGUIEncoder(t.wire.(*RunAgentInput), o, newAGUIState(ctx, p.store, p.keys))
	for _, tool := range withPageTools(o.Agent, t.tools).Tools {
		if _, ok := tool.(*pageTool); ok {
			e.pageTools[tool.Spec().Name] = true
		}
	}
	return e
}
