package runlet

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet/internal/toolname"
)

// Handoff lets an agent hand the conversation to another agent (see
// Agent.Handoffs). The model sees it as a tool named "transfer_to_" and
// the target's name; when the model calls it, the run goes on with the
// target's instructions, tools, model and settings. The run's limits and
// max turns span every agent, so agents handing the conversation back and
// forth stop at max turns.
type Handoff struct {
	// Agent takes over the conversation.
	Agent *Agent
	// Description tells the model when to hand off (the target's
	// Description by default).
	Description string
	// Filter, if set, chooses what the target's model sees of the
	// conversation before the handoff; the session still stores it all.
	Filter func(msgs []Message) []Message
}

// handoffTool is the tool a Handoff shows the model.
type handoffTool struct {
	h    *Handoff
	spec ToolSpec
}

func newHandoffTool(h *Handoff) *handoffTool {
	name := handoffName(h.Agent)
	desc := h.Description
	if desc == "" {
		desc = "Hand the conversation to the " + h.Agent.Name + " agent."
		if h.Agent.Description != "" {
			desc += " " + h.Agent.Description
		}
	}
	return &handoffTool{h: h, spec: ToolSpec{Name: name, Description: desc, InputSchema: &jsonschema.Schema{Type: "object"}}}
}

func (t *handoffTool) Spec() ToolSpec { return t.spec }

// handoffPrefix begins the name of every handoff tool.
const handoffPrefix = "transfer_to_"

// handoffName is the name of the tool that hands over to a.
func handoffName(a *Agent) string { return toolname.Make(handoffPrefix, a.Name, "agent") }

// Call only says what a run does when the model calls the tool.
func (t *handoffTool) Call(context.Context, json.RawMessage) (string, error) {
	return "Transferred to " + t.h.Agent.Name + ".", nil
}

// handoffResult answers a handoff call and remembers the handoff for the
// end of the turn; a second one in the same turn is refused.
func (r *run) handoffResult(c ToolCallPart, t *handoffTool) (ToolResultPart, ToolErrorKind) {
	if r.next != nil {
		return errorResult(c, "Error: the conversation is already handed to "+r.next.Agent.Name+" in this turn."), ToolFailed
	}
	r.next = t.h
	out, _ := t.Call(r.ctx, nil)
	return ToolResultPart{CallID: c.ID, Name: c.Name, Content: out}, ""
}

// handOff switches the run to the agent the model handed the conversation
// to, at the end of the turn.
func (r *run) handOff() error {
	h := r.next
	r.next = nil
	if h.Filter != nil {
		r.view = h.Filter(slices.Clip(r.conversation()))
		r.viewAt, r.filtered = len(r.added), true
	}
	if r.watched {
		r.emit(&HandoffOccurred{From: r.agent.Name, To: h.Agent.Name})
	}
	r.agent, r.calledTools = h.Agent, false
	r.info.mu.Lock()
	r.info.Agent = h.Agent.Name
	r.info.mu.Unlock()
	return r.setupAgent()
}

// conversation returns the messages the current agent's model sees: the
// history and the run's messages, or, after a handoff with a Filter, what
// the filter kept and the messages since.
func (r *run) conversation() []Message {
	return r.appendConversation(make([]Message, 0, r.conversationLen()))
}

// conversationLen is len(r.conversation()).
func (r *run) conversationLen() int {
	if r.filtered {
		return len(r.view) + len(r.added) - r.viewAt
	}
	return len(r.history) + len(r.added)
}

// appendConversation appends the conversation to msgs.
func (r *run) appendConversation(msgs []Message) []Message {
	if r.filtered {
		return append(append(msgs, r.view...), r.added[r.viewAt:]...)
	}
	return append(append(msgs, r.history...), r.added...)
}

// findAgent returns the agent named name among from and the agents its
// handoffs reach, or nil.
func findAgent(from *Agent, name string) *Agent {
	seen := map[*Agent]bool{}
	queue := []*Agent{from}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if a == nil || seen[a] {
			continue
		}
		seen[a] = true
		if a.Name == name {
			return a
		}
		for _, h := range a.Handoffs {
			queue = append(queue, h.Agent)
		}
	}
	return nil
}
