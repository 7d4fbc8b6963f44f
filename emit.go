package runlet

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// sink is where the events of a run go, shared by the run's agent and the
// agents it calls as tools, which emit from their own goroutines: one
// sequence, one Stream consumer, the same observers.
type sink struct {
	mu      sync.Mutex
	seq     int64
	yield   func(Event, error) bool // nil for Run/Resume
	stopped atomic.Bool             // the Stream consumer stopped ranging
	cancel  context.CancelFunc      // the top run's
}

// emit stamps the event, shows it to observers, then yields it to the
// Stream consumer (until the consumer stops).
func (r *run) emit(ev Event) { r.emitTerminal(ev, nil) }

func (r *run) emitTerminal(ev Event, err error) { r.send(ev, err, false) }

// send emits ev; mute (a tripwire) drops this agent's later deltas (see
// runGuard.muted). Guardrail checks and their model calls emit from their
// own goroutines: what send changes of the run is under the sink's lock.
func (r *run) send(ev Event, err error, mute bool) {
	if r.depth > 0 {
		// An agent called as a tool ends as a tool does, not as the run.
		ev, err = nestedEvent(ev), nil
	}
	s := r.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.muted && isDelta(ev) {
		return
	}
	r.muted = r.muted || mute
	r.seq++
	s.seq++
	h := ev.Header()
	*h = EventHeader{Type: ev.eventType(), RunID: r.cfg.runID, Seq: s.seq, Time: time.Now(), Depth: r.depth, CallPath: r.path}
	if r.agent != nil {
		h.Agent = r.agent.Name
	}
	if r.info != nil {
		h.Turn = r.info.Turn
	}
	if len(r.observers) > 0 {
		// Observers only watch: they get a copy, so changing it changes
		// nothing the run sends, keeps or returns. Nobody observing, no copy.
		seen := cloneEvent(ev)
		for _, o := range r.observers {
			r.observe(o, seen)
		}
	}
	if s.yield != nil && !s.stopped.Load() {
		if !s.yield(ev, err) {
			s.stopped.Store(true)
			if s.cancel != nil {
				s.cancel()
			}
		}
	}
}

// isDelta reports whether ev is a fragment of a model call's response.
func isDelta(ev Event) bool {
	switch ev.(type) {
	case *TextDelta, *ReasoningDelta, *ToolCallDelta, *OutputPartial:
		return true
	}
	return false
}

// nestedEvent turns the first and last events of an agent called as a tool
// into AgentStarted and AgentFinished.
func nestedEvent(ev Event) Event {
	switch e := ev.(type) {
	case *RunStarted:
		return &AgentStarted{Input: e.Input}
	case *RunResumed:
		return &AgentStarted{Resumed: true}
	case *RunFinished:
		return &AgentFinished{Status: StateFinished, Result: e.Result}
	case *RunInterrupted:
		return &AgentFinished{Status: StateInterrupted, Result: e.Result}
	case *RunFailed:
		return &AgentFinished{Status: StateFailed, Error: e.Error, ErrorType: e.ErrorType, Policy: e.Policy, Result: e.Result}
	}
	return ev
}

func (r *run) observe(o Observer, ev Event) {
	defer func() {
		if v := recover(); v != nil {
			r.rt.logger.Error("runlet: observer panicked", "run_id", r.cfg.runID, "event", ev.eventType(), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	o.Observe(r.ctx, ev)
}

// cloneEvent returns a copy of ev sharing no mutable memory with it (tool
// schemas and option values aside, which are read-only by contract). An
// event type whose fields are all values needs no case here.
func cloneEvent(ev Event) Event {
	switch e := ev.(type) {
	case *RunStarted:
		c := *e
		c.Input = cloneMessages(e.Input)
		return &c
	case *AgentStarted:
		c := *e
		c.Input = cloneMessages(e.Input)
		return &c
	case *AgentFinished:
		c := *e
		c.Result = cloneResult(e.Result)
		return &c
	case *RunResumed:
		c := *e
		c.Decisions = slices.Clone(e.Decisions)
		for i := range c.Decisions {
			c.Decisions[i].Arguments = slices.Clone(c.Decisions[i].Arguments)
		}
		return &c
	case *ContextPrepared:
		c := *e
		c.Notes = slices.Clone(e.Notes)
		return &c
	case *ModelStarted:
		c := *e
		c.Request = cloneRequest(e.Request)
		return &c
	case *ModelFinished:
		c := *e
		c.Response = cloneResponse(e.Response)
		return &c
	case *ToolStarted:
		c := *e
		c.Call = e.Call.clone()
		return &c
	case *ToolFinished:
		c := *e
		c.Call = e.Call.clone()
		c.Result = e.Result.clone()
		return &c
	case *RunInterrupted:
		c := *e
		c.Pending = cloneCalls(e.Pending)
		c.Result = cloneResult(e.Result)
		return &c
	case *RunFinished:
		c := *e
		c.Result = cloneResult(e.Result)
		return &c
	case *RunFailed:
		c := *e
		c.Result = cloneResult(e.Result)
		return &c
	case *OutputPartial:
		c := *e
		c.JSON = slices.Clone(e.JSON)
		return &c
	case *OutputChecked:
		c := *e
		c.Errors = slices.Clone(e.Errors)
		return &c
	case *GuardrailChecked:
		c := *e
		c.Info = slices.Clone(e.Info)
		return &c
	case *TextDelta: // the frequent ones, without reflection
		return ptr(*e)
	case *ReasoningDelta:
		return ptr(*e)
	case *ToolCallDelta:
		return ptr(*e)
	}
	// An event of plain values: a copy of the struct is a deep copy.
	v := reflect.ValueOf(ev).Elem()
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	return c.Interface().(Event)
}

func ptr[T any](v T) *T { return &v }

func cloneCalls(calls []ToolCallPart) []ToolCallPart {
	out := slices.Clone(calls)
	for i := range out {
		out[i] = out[i].clone()
	}
	return out
}

func cloneRequest(req *ModelRequest) *ModelRequest {
	if req == nil {
		return nil
	}
	c := *req
	c.Messages = cloneMessages(req.Messages)
	c.Tools = slices.Clone(req.Tools)
	c.HostedTools = slices.Clone(req.HostedTools)
	c.Options = maps.Clone(req.Options)
	c.StopSequences = slices.Clone(req.StopSequences)
	if req.Temperature != nil {
		c.Temperature = ptr(*req.Temperature)
	}
	if req.TopP != nil {
		c.TopP = ptr(*req.TopP)
	}
	if req.OutputSchema != nil {
		c.OutputSchema = ptr(*req.OutputSchema)
	}
	return &c
}

func cloneResponse(resp *ModelResponse) *ModelResponse {
	if resp == nil {
		return nil
	}
	c := *resp
	c.Message = cloneMessages([]Message{resp.Message})[0]
	return &c
}

func cloneResult(res *Result) *Result {
	if res == nil {
		return nil
	}
	c := *res
	c.Messages = cloneMessages(res.Messages)
	c.Pending = cloneCalls(res.Pending)
	c.UsageByPurpose = maps.Clone(res.UsageByPurpose)
	c.UsageByModel = maps.Clone(res.UsageByModel)
	c.CostByModel = maps.Clone(res.CostByModel)
	c.UsageByAgent = maps.Clone(res.UsageByAgent)
	c.CostByAgent = maps.Clone(res.CostByAgent)
	return &c
}
