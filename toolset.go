package runlet

import (
	"context"
	"fmt"
	"strings"
)

// Toolset is a group of tools that may change while runs go on, such as the
// tools of an MCP server whose list changes. Before every model call the
// runtime asks each of the agent's toolsets for its current tools: the model
// sees the new list from that call on, and a tool that is gone is an
// unknown tool to a model that still calls it.
//
// Tools is called on the run's goroutine and should return quickly, from a
// cache when nothing changed. An error fails the run.
//
// A toolset's tool never fails a run by its name: one whose name is empty
// or already taken is left out of that model call's tools. Names are taken
// in this order: the agent's own Tools and its handoffs first, then each
// toolset's tools in the order of Agent.Toolsets and of its list. So a
// server that adds a tool named like one of the agent's own cannot replace
// it, nor stop the agent's runs. (Two of the agent's own Tools, or a tool
// and a handoff, with the same name are a mistake in the program, and do
// fail the run.)
type Toolset interface {
	Tools(ctx context.Context) ([]Tool, error)
}

// toolFrom says where a tool came from, for an error: the agent's tool i,
// toolset i's tool j, or handoff i. Formatted only for an error.
type toolFrom struct {
	kind byte // 't', 's', 'h'
	i, j int
}

func (f toolFrom) String() string {
	switch f.kind {
	case 's':
		return fmt.Sprintf("toolset %d's tool %d", f.i, f.j)
	case 'h':
		return fmt.Sprintf("handoff %d", f.i)
	}
	return fmt.Sprintf("tool %d", f.i)
}

// addTool adds t to the run's tools, failing on a nil tool or an empty or
// duplicate name. from says where t came from, for the error. With keep
// false the caller sets r.tools itself (to the agent's own list).
func (r *run) addTool(t Tool, from toolFrom, keep bool) error {
	a := r.agent
	if t == nil {
		return fmt.Errorf("runlet: agent %q: %s is nil", a.Name, from)
	}
	s := t.Spec()
	if s.Name == "" || r.toolAt(s.Name) >= 0 {
		return fmt.Errorf("runlet: agent %q: %s has an empty or duplicate name %q", a.Name, from, s.Name)
	}
	r.specs = append(r.specs, s)
	if keep {
		r.tools = append(r.tools, t)
	}
	if r.toolIndex != nil {
		r.toolIndex[s.Name] = len(r.specs) - 1
	} else if len(r.specs) == toolIndexFrom {
		r.toolIndex = make(map[string]int, 2*toolIndexFrom)
		for i, s := range r.specs {
			r.toolIndex[s.Name] = i
		}
	}
	return nil
}

// toolIndexFrom is the number of tools from which a run looks them up by
// name in a map; fewer are found faster, and without the map, by scanning.
const toolIndexFrom = 16

// toolAt returns the index of the run's tool named name, or -1.
func (r *run) toolAt(name string) int {
	if r.toolIndex != nil {
		if i, ok := r.toolIndex[name]; ok {
			return i
		}
		return -1
	}
	for i := range r.specs {
		if r.specs[i].Name == name {
			return i
		}
	}
	return -1
}

// tool returns the run's tool named name.
func (r *run) tool(name string) (Tool, bool) {
	if i := r.toolAt(name); i >= 0 {
		return r.tools[i], true
	}
	return nil, false
}

// toolOf returns the run's tool named name, or nil.
func (r *run) toolOf(name string) Tool {
	t, _ := r.tool(name)
	return t
}

// loadTools builds the run's tools: the agent's Tools, then the current
// tools of each of its Toolsets.
func (r *run) loadTools() error {
	a := r.agent
	n := len(a.Tools)
	if r.specs != nil {
		n = len(r.specs)
	}
	// An agent with only its own Tools: the run uses that list as is (it
	// only reads it) rather than a copy.
	own := len(a.Toolsets) == 0 && len(a.Handoffs) == 0
	r.specs, r.toolIndex = make([]ToolSpec, 0, n), nil
	if own {
		r.tools = a.Tools[:len(a.Tools):len(a.Tools)]
	} else {
		r.tools = make([]Tool, 0, n)
	}
	for i, t := range a.Tools {
		if err := r.addTool(t, toolFrom{'t', i, 0}, !own); err != nil {
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
			if t != nil {
				if name := t.Spec().Name; name == "" || r.toolAt(name) >= 0 || handoffNamed(a.Handoffs, name) {
					continue // taken: left out (see Toolset)
				}
			}
			if err := r.addTool(t, toolFrom{'s', i, j}, true); err != nil {
				return err
			}
		}
	}
	for i := range a.Handoffs {
		h := &a.Handoffs[i]
		if h.Agent == nil {
			return fmt.Errorf("runlet: agent %q: handoff %d has no agent", a.Name, i)
		}
		if err := r.addTool(newHandoffTool(h), toolFrom{'h', i, 0}, true); err != nil {
			return err
		}
	}
	r.toolsLoaded = true
	return nil
}

// handoffNamed reports whether one of hs is offered as a tool named name.
func handoffNamed(hs []Handoff, name string) bool {
	if !strings.HasPrefix(name, handoffPrefix) {
		return false
	}
	for i := range hs {
		if hs[i].Agent != nil && handoffName(hs[i].Agent) == name {
			return true
		}
	}
	return false
}
