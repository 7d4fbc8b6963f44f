package modelkit

import (
	"encoding/json"
	"strings"

	"github.com/runlet/runlet"
)

// Accumulator assembles stream deltas into a runlet.ModelResponse. Provider authors
// feed it every delta they yield and call Response at the end; the runtime
// does not need it, since adapters hand over the assembled response in
// runlet.StreamDone.
//
// Parts keep arrival order: consecutive text deltas grow one runlet.TextPart,
// consecutive reasoning deltas one runlet.ReasoningPart, and tool-call deltas are
// grouped by Index however they interleave. The zero value is ready to use.
type Accumulator struct {
	parts []*accPart  // pointers: an accPart holds a strings.Builder, which must not be copied
	calls map[int]int // tool-call index -> position in parts
	last  int         // position of the part the last text/reasoning delta grew, -1 after EndPart
	init  bool
}

type accPart struct {
	kind runlet.StreamEventKind
	text strings.Builder
	// reasoning continuation state
	reasoning runlet.ReasoningPart
	// tool call: ID, name and continuation state (arguments grow in text)
	call runlet.ToolCallPart
	// text: its citations
	citations []runlet.Citation
	// whole: a part added whole (AddPart), kind 0
	whole runlet.Part
}

// Add records one delta. runlet.StreamDone events are ignored.
func (a *Accumulator) Add(ev runlet.StreamEvent) {
	if !a.init {
		a.last, a.init = -1, true
	}
	switch ev.Kind {
	case runlet.StreamTextDelta, runlet.StreamReasoningDelta:
		if a.last < 0 || a.parts[a.last].kind != ev.Kind {
			a.parts = append(a.parts, &accPart{kind: ev.Kind})
			a.last = len(a.parts) - 1
		}
		a.parts[a.last].text.WriteString(ev.Delta)
	case runlet.StreamToolCallDelta:
		if a.calls == nil {
			a.calls = make(map[int]int)
		}
		pos, ok := a.calls[ev.Index]
		if !ok {
			a.parts = append(a.parts, &accPart{kind: runlet.StreamToolCallDelta})
			pos = len(a.parts) - 1
			a.calls[ev.Index] = pos
		}
		p := a.parts[pos]
		if ev.ID != "" {
			p.call.ID = ev.ID
		}
		if ev.Name != "" {
			p.call.Name = ev.Name
		}
		p.text.WriteString(ev.Delta)
		a.last = -1
	}
}

// EndPart closes the current text or reasoning part, so that the next delta
// of the same kind starts a new part (for providers with explicit blocks).
func (a *Accumulator) EndPart() { a.last, a.init = -1, true }

// SetReasoningState attaches continuation state (signature, encrypted
// payload, item ID, provider, structured details) to the current reasoning
// part, creating an empty one if the last part is not reasoning (redacted
// thinking has no text). st.Text is ignored (the text comes from deltas);
// empty fields leave earlier values unchanged.
func (a *Accumulator) SetReasoningState(st runlet.ReasoningPart) {
	if !a.init {
		a.last, a.init = -1, true
	}
	if a.last < 0 || a.parts[a.last].kind != runlet.StreamReasoningDelta {
		a.parts = append(a.parts, &accPart{kind: runlet.StreamReasoningDelta})
		a.last = len(a.parts) - 1
	}
	r := &a.parts[a.last].reasoning
	if st.Signature != "" {
		r.Signature = st.Signature
	}
	if st.Encrypted != "" {
		r.Encrypted = st.Encrypted
	}
	if st.ID != "" {
		r.ID = st.ID
	}
	if st.Provider != "" {
		r.Provider = st.Provider
	}
	if st.Details != "" {
		r.Details = st.Details
	}
}

// SetToolCallState attaches continuation state (item ID, provider,
// signature) to the tool call with the given stream index, creating the
// call if no delta with that index was added yet. The call's ID, name and
// arguments come from deltas and are ignored here; empty fields leave
// earlier values unchanged.
func (a *Accumulator) SetToolCallState(index int, st runlet.ToolCallPart) {
	a.Add(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: index})
	c := &a.parts[a.calls[index]].call
	if st.ItemID != "" {
		c.ItemID = st.ItemID
	}
	if st.Provider != "" {
		c.Provider = st.Provider
	}
	if st.Signature != "" {
		c.Signature = st.Signature
	}
}

// AddPart appends a part that arrives whole, such as a
// runlet.HostedToolPart, after the parts so far; the next text or
// reasoning delta starts a new part.
func (a *Accumulator) AddPart(p runlet.Part) {
	a.parts = append(a.parts, &accPart{whole: p})
	a.last, a.init = -1, true
}

// AddCitation attaches a citation to the current text part (creating an
// empty one if the last part is not text), as providers that stream a
// text's citations beside its deltas send them.
func (a *Accumulator) AddCitation(c runlet.Citation) {
	if !a.init {
		a.last, a.init = -1, true
	}
	if a.last < 0 || a.parts[a.last].kind != runlet.StreamTextDelta {
		a.parts = append(a.parts, &accPart{kind: runlet.StreamTextDelta})
		a.last = len(a.parts) - 1
	}
	p := a.parts[a.last]
	p.citations = append(p.citations, c)
}

// Len returns the number of parts assembled so far. An adapter that bounds
// a response's memory charges each new part a fixed cost: a part costs a
// few hundred bytes of heap however small its deltas.
func (a *Accumulator) Len() int { return len(a.parts) }

// HasToolCalls reports whether any tool-call delta was added.
func (a *Accumulator) HasToolCalls() bool { return len(a.calls) > 0 }

// Message returns the assembled assistant message. Empty tool-call arguments
// become "{}".
func (a *Accumulator) Message() runlet.Message {
	msg := runlet.Message{Role: runlet.RoleAssistant, Parts: make([]runlet.Part, 0, len(a.parts))}
	for i := range a.parts {
		p := a.parts[i]
		switch p.kind {
		case 0:
			msg.Parts = append(msg.Parts, p.whole)
		case runlet.StreamTextDelta:
			msg.Parts = append(msg.Parts, runlet.TextPart{Text: p.text.String(), Citations: p.citations})
		case runlet.StreamReasoningDelta:
			r := p.reasoning
			r.Text = p.text.String()
			msg.Parts = append(msg.Parts, r)
		case runlet.StreamToolCallDelta:
			args := p.text.String()
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			c := p.call
			c.Arguments = json.RawMessage(args)
			msg.Parts = append(msg.Parts, c)
		}
	}
	return msg
}

// Response returns the assembled response with the given usage and finish
// reason. If finish is empty it is runlet.FinishToolCalls when there are tool calls
// and runlet.FinishStop otherwise.
func (a *Accumulator) Response(usage runlet.Usage, finish runlet.FinishReason) *runlet.ModelResponse {
	if finish == "" {
		finish = runlet.FinishStop
		if a.HasToolCalls() {
			finish = runlet.FinishToolCalls
		}
	}
	return &runlet.ModelResponse{Message: a.Message(), Usage: usage, FinishReason: finish}
}
