package runlet

import (
	"context"
	"fmt"
)

// Toolset is a group of tools that may change while runs go on, such as the
// tools of an MCP server whose list changes. Before every model call the
// runtime asks each of the agent's toolsets for its current tools: the model
// sees the new list from that call on, and a tool that is gone is an
// unknown tool to a model that still calls it.
//
// Tools is called on the run's goroutine and should return quickly, from a
// cache when nothing changed. An error fails the run.
type Toolset interface {
	Tools(ctx context.Context) ([]Tool, error)
}

// addTool adds t to the run's tools, failing on a nil tool or an empty or
// duplicate name. from says where t came from, for the error.
func (r *run) addTool(t Tool, from string) error {
	a := r.agent
	if t == nil {
		return fmt.Errorf("runlet: agent %q: %s is nil", a.Name, from)
	}
	s := t.Spec()
	if _, dup := r.tools[s.Name]; dup || s.Name == "" {
		return fmt.Errorf("runlet: agent %q: %s has an empty or duplicate name %q", a.Name, from, s.Name)
	}
	r.tools[s.Name] = t
	r.specs = append(r.specs, s)
	return nil
}

// loadTools builds the run's tools: the agent's Tools, then the current
// tools of each of its Toolsets.
func (r *run) loadTools() error {
	a := r.agent
	n := len(a.Tools)
	if r.tools != nil {
		n = len(r.tools)
	}
	r.tools = make(map[string]Tool, n)
	r.specs = make([]ToolSpec, 0, n)
	for i, t := range a.Tools {
		if err := r.addTool(t, fmt.Sprintf("tool %d", i)); err != nil {
			return err
		}
	}
	for i, ts := range a.Toolsets {
		if ts == nil {
			return fmt.Errorf("runlet: agent %q: toolset %d is nil", a.Name, i)
		}
		tools, err := ts.Tools(r.ctx)
		if err != nil {
			return fmt.Errorf("runlet: agent %q: toolset %d: %w", a.Name, i, err)
		}
		for j, t := range tools {
			if err := r.addTool(t, fmt.Sprintf("toolset %d's tool %d", i, j)); err != nil {
				return err
			}
		}
	}
	for i := range a.Handoffs {
		h := &a.Handoffs[i]
		if h.Agent == nil {
			return fmt.Errorf("runlet: agent %q: handoff %d has no agent", a.Name, i)
		}
		if err := r.addTool(newHandoffTool(h), fmt.Sprintf("handoff %d", i)); err != nil {
			return err
		}
	}
	r.toolsLoaded = true
	return nil
}
