package runlet

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
)

// Observer watches a run's events. Observers are called synchronously, in
// the order they were added, with events in sequence order. They cannot
// change the run: they are shown a copy of each event (one copy, shared by
// the observers of the run), so changing its request, response, messages or
// result changes nothing sent to the model or returned to the caller; Hooks
// are the way to change behaviour. A panicking observer is recovered and
// reported to the runtime's logger; the run goes on.
type Observer interface {
	Observe(ctx context.Context, ev Event)
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(ctx context.Context, ev Event)

// Observe calls f.
func (f ObserverFunc) Observe(ctx context.Context, ev Event) { f(ctx, ev) }

// JSONLObserver writes each event as one JSON line, the way slog.JSONHandler
// writes records. Images, files and audio (in messages and tool results)
// are written as a summary, without their bytes: the part's "type", its
// "media_type", "name" or "url", its size in "bytes" and the "sha256" of
// its data. It is safe for concurrent runs.
type JSONLObserver struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewJSONLObserver returns an observer writing JSON lines to w.
func NewJSONLObserver(w io.Writer) *JSONLObserver { return &JSONLObserver{w: w} }

// Observe implements Observer.
func (o *JSONLObserver) Observe(_ context.Context, ev Event) {
	b, err := json.Marshal(summarizeEvent(ev))
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil {
		b = append(b, '\n')
		_, err = o.w.Write(b)
	}
	if err != nil && o.err == nil {
		o.err = err
	}
}

// Err returns the first encoding or write error, if any.
func (o *JSONLObserver) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// NewSlogObserver returns an observer logging events to l (slog.Default()
// if nil): deltas at Debug, tool and model events at Info, failures at
// Error. Request and response bodies are not logged, only their shape;
// tool arguments neither, but a call whose arguments a person edited on
// approval (see ApproveWithArguments) is marked edited_arguments=true.
func NewSlogObserver(l *slog.Logger) Observer {
	if l == nil {
		l = slog.Default()
	}
	return &slogObserver{l: l}
}

type slogObserver struct{ l *slog.Logger }

func (o *slogObserver) Observe(ctx context.Context, ev Event) {
	h := ev.Header()
	level := slog.LevelInfo
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs, slog.String("run_id", h.RunID), slog.Int64("seq", h.Seq), slog.Int("turn", h.Turn))
	if h.Agent != "" {
		attrs = append(attrs, slog.String("agent", h.Agent))
	}
	switch e := ev.(type) {
	case *TextDelta, *ReasoningDelta, *ToolCallDelta, *StateChanged, *ContextPrepared:
		level = slog.LevelDebug
		if sc, ok := e.(*StateChanged); ok {
			attrs = append(attrs, slog.String("from", string(sc.From)), slog.String("to", string(sc.To)))
		}
	case *ModelStarted:
		attrs = append(attrs, slog.Int("messages", len(e.Request.Messages)), slog.Int("tools", len(e.Request.Tools)))
		if e.Check != "" { // a guardrail's call
			attrs = append(attrs, slog.String("purpose", e.Purpose), slog.String("check", e.Check))
		}
	case *ModelFinished:
		attrs = append(attrs, slog.String("finish", string(e.Response.FinishReason)),
			slog.Int("input_tokens", e.Response.Usage.InputTokens), slog.Int("output_tokens", e.Response.Usage.OutputTokens),
			slog.Duration("duration", e.Duration))
	case *ToolStarted:
		attrs = append(attrs, slog.String("tool", e.Call.Name), slog.String("call_id", e.Call.ID))
		if e.Call.OriginalArguments != nil { // a person changed the arguments
			attrs = append(attrs, slog.Bool("edited_arguments", true))
		}
	case *ToolFinished:
		attrs = append(attrs, slog.String("tool", e.Call.Name), slog.String("call_id", e.Call.ID))
		if e.Call.OriginalArguments != nil {
			attrs = append(attrs, slog.Bool("edited_arguments", true))
		}
		attrs = append(attrs, slog.Bool("is_error", e.Result.IsError), slog.Duration("duration", e.Duration))
		if s := partsSummary(e.Result.Parts); s != "" {
			attrs = append(attrs, slog.String("media", s))
		}
		if e.ErrorKind != "" {
			level = slog.LevelWarn
			attrs = append(attrs, slog.String("error_kind", string(e.ErrorKind)))
		}
	case *RunFinished:
		attrs = append(attrs, slog.Int("turns", e.Result.Turns), slog.Int("total_tokens", e.Result.Usage.TotalTokens))
	case *RunInterrupted:
		attrs = append(attrs, slog.Int("pending", len(e.Pending)))
	case *GuardrailChecked:
		attrs = append(attrs, slog.String("guardrail", e.Guardrail), slog.String("stage", string(e.Stage)),
			slog.String("action", string(e.Action)), slog.Duration("duration", e.Duration))
		if e.CallID != "" {
			attrs = append(attrs, slog.String("call_id", e.CallID))
		}
		if e.Action != GuardrailPass {
			level = slog.LevelWarn
			attrs = append(attrs, slog.String("message", e.Message))
		}
		if e.Error != "" {
			level = slog.LevelWarn
			attrs = append(attrs, slog.String("error", e.Error))
		}
	case *OutputWithdrawn:
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("guardrail", e.Guardrail), slog.String("stage", string(e.Stage)))
	case *RunFailed:
		level = slog.LevelError
		attrs = append(attrs, slog.String("error", e.Error))
		if e.Policy != "" {
			attrs = append(attrs, slog.String("policy", e.Policy))
		}
	}
	o.l.LogAttrs(ctx, level, ev.eventType(), attrs...)
}
