package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/runlet/runlet"
)

// ANSI styles, used only when stderr is a terminal and NO_COLOR is unset.
const (
	dim   = "\x1b[2m"
	bold  = "\x1b[1m"
	cyan  = "\x1b[36m"
	green = "\x1b[32m"
	red   = "\x1b[31m"
	reset = "\x1b[0m"
)

func (a *app) style(style, s string) string {
	if !a.color || s == "" {
		return s
	}
	return style + s + reset
}

// renderer prints a run for a person: the answer streamed to stdout as it
// arrives; reasoning (dimmed), tool calls with their arguments and one-line
// results, and a usage summary on stderr; and, on a terminal only, a
// spinner while waiting for the first token or a slow tool.
type renderer struct {
	a             *app
	showReasoning bool

	mu sync.Mutex
	// outCol0 and errCol0 say whether stdout and stderr are at the start of
	// a line. When both are the same terminal they move together.
	outCol0, errCol0 bool
	shared           bool
	inReasoning      bool
	running          int // tools running
	toolCalls        int
	started          time.Time

	// spinner state; the goroutine exists only on a terminal.
	spinLabel string
	spinSince time.Time
	spinOn    bool
	spinShown bool
	quit      chan struct{}
	done      chan struct{}
}

const (
	spinDelay  = 250 * time.Millisecond // no spinner for quick waits
	spinPeriod = 100 * time.Millisecond
)

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (a *app) newRenderer(showReasoning bool) *renderer {
	r := &renderer{a: a, showReasoning: showReasoning, outCol0: true, errCol0: true,
		shared: a.stdoutTTY && a.stderrTTY, started: time.Now()}
	if a.stderrTTY {
		r.quit, r.done = make(chan struct{}), make(chan struct{})
		go r.spin(r.quit)
	}
	return r
}

// close stops the spinner and ends an unfinished line.
func (r *renderer) close() {
	r.mu.Lock()
	quit := r.quit
	r.quit = nil
	r.mu.Unlock()
	if quit != nil {
		close(quit)
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearSpinner()
	r.endReasoning()
	if !r.outCol0 {
		r.writeOut("\n")
	}
}

func (r *renderer) spin(quit <-chan struct{}) {
	defer close(r.done)
	t := time.NewTicker(spinPeriod)
	defer t.Stop()
	frame := 0
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		r.mu.Lock()
		if r.spinOn && time.Since(r.spinSince) >= spinDelay && r.errCol0 && (r.shared && r.outCol0 || !r.shared) {
			label := r.spinLabel
			if el := time.Since(r.spinSince); el >= 2*time.Second {
				label += fmt.Sprintf(" %ds", int(el.Seconds()))
			}
			fmt.Fprintf(r.a.stderr, "\r%s %s\x1b[K", r.a.style(cyan, spinFrames[frame%len(spinFrames)]), r.a.style(dim, label))
			r.spinShown = true
			frame++
		}
		r.mu.Unlock()
	}
}

// startSpinner shows label with a spinner after a short delay; it keeps
// the start time when only the label changes.
func (r *renderer) startSpinner(label string) {
	if r.quit == nil {
		return
	}
	if !r.spinOn {
		r.spinSince = time.Now()
	}
	r.spinOn, r.spinLabel = true, label
}

func (r *renderer) stopSpinner() {
	r.spinOn = false
	r.clearSpinner()
}

func (r *renderer) clearSpinner() {
	if r.spinShown {
		io.WriteString(r.a.stderr, "\r\x1b[K")
		r.spinShown = false
	}
}

func (r *renderer) writeOut(s string) {
	if s == "" {
		return
	}
	r.clearSpinner()
	io.WriteString(r.a.stdout, s)
	r.outCol0 = strings.HasSuffix(s, "\n")
	if r.shared {
		r.errCol0 = r.outCol0
	}
}

func (r *renderer) writeErr(s string) {
	if s == "" {
		return
	}
	r.clearSpinner()
	io.WriteString(r.a.stderr, s)
	r.errCol0 = strings.HasSuffix(s, "\n")
	if r.shared {
		r.outCol0 = r.errCol0
	}
}

// line starts a new line on stderr if the cursor is mid-line.
func (r *renderer) line() {
	if !r.errCol0 {
		r.writeErr("\n")
	} else if r.shared && !r.outCol0 {
		r.writeErr("\n")
	}
}

func (r *renderer) endReasoning() {
	if r.inReasoning {
		r.inReasoning = false
		if !r.errCol0 {
			r.writeErr("\n")
		}
	}
}

// event renders one event.
func (r *renderer) event(ev runlet.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.a
	switch e := ev.(type) {
	case *runlet.ModelStarted:
		if e.Check != "" { // a guardrail's call, beside the agent's
			return
		}
		r.startSpinner("thinking")
	case *runlet.ReasoningDelta:
		if !r.showReasoning {
			return
		}
		r.stopSpinner()
		if !r.inReasoning {
			r.line()
			r.inReasoning = true
		}
		r.writeErr(a.style(dim, printable(e.Delta)))
	case *runlet.TextDelta:
		r.stopSpinner()
		r.endReasoning()
		if a.stdoutTTY {
			r.writeOut(printable(e.Delta))
		} else {
			r.writeOut(e.Delta) // data: as the model wrote it
		}
	case *runlet.ToolCallDelta:
		if e.Name != "" {
			r.startSpinner("preparing " + printable(e.Name))
		}
	case *runlet.ModelFinished:
		if e.Check != "" {
			return
		}
		r.stopSpinner()
		r.endReasoning()
		if !r.outCol0 {
			r.writeOut("\n")
		}
		if e.Response != nil {
			r.citations(e.Response.Message)
		}
	case *runlet.HostedToolFinished:
		// A tool the provider ran within the call: what it was asked and
		// what it found.
		r.line()
		p := e.Part
		what := printable(cmp.Or(string(p.Kind), p.Name))
		s := a.style(cyan, "⌕ "+what) + " " + a.style(dim, printable(oneLine(string(p.Input), 100)))
		if n := len(p.Sources); n > 0 {
			s += a.style(dim, fmt.Sprintf(" · %d source%s", n, plural(n)))
		}
		if p.IsError {
			s += a.style(red, " failed")
		}
		r.writeErr(s + "\n")
	case *runlet.ContextPrepared:
		if e.Changed {
			for _, n := range e.Notes {
				r.line()
				r.writeErr(a.style(dim, "· context: "+printable(n)) + "\n")
			}
		}
	case *runlet.ToolStarted:
		r.stopSpinner()
		r.line()
		name := printable(e.Call.Name)
		r.writeErr(a.style(cyan, "→ "+name) + " " + a.style(dim, printable(oneLine(compactArgs(e.Call.Arguments), 100))) + "\n")
		r.running++
		r.toolCalls++
		r.startSpinner("running " + name)
	case *runlet.ToolFinished:
		r.stopSpinner()
		r.running--
		took := a.style(dim, " ("+roundDuration(e.Duration)+")")
		name, content := printable(e.Call.Name), printable(oneLine(e.Result.Content, 100))
		if e.Result.IsError {
			r.writeErr(a.style(red, "  ✗ "+name+": "+content) + took + "\n")
		} else {
			r.writeErr(a.style(green, "  ← ") + name + ": " + content + took + "\n")
		}
		if r.running > 0 {
			r.startSpinner("running tools")
		}
	case *runlet.GuardrailChecked:
		r.guardrail(e)
	case *runlet.OutputWithdrawn:
		r.stopSpinner()
		r.endReasoning()
		if !r.outCol0 {
			r.writeOut("\n")
		}
		r.line()
		r.writeErr(a.style(red, "⊘ the answer above is withdrawn: guardrail "+printable(e.Guardrail)+" stopped it") + "\n")
	case *runlet.RunFinished, *runlet.RunFailed, *runlet.RunInterrupted:
		r.stopSpinner()
		r.endReasoning()
		if !r.outCol0 {
			r.writeOut("\n")
		}
	}
}

// citations lists the sources an answer's text cites, once each, on
// stderr (the answer itself stays on stdout, as written).
func (r *renderer) citations(msg runlet.Message) {
	seen := map[string]bool{}
	var lines []string
	for _, p := range msg.Parts {
		t, ok := p.(runlet.TextPart)
		if !ok {
			continue
		}
		for _, c := range t.Citations {
			key := cmp.Or(c.URL, c.FileID)
			if key == "" || seen[key] {
				continue
			}
			seen[key] = true
			lines = append(lines, fmt.Sprintf("  [%d] %s %s", len(lines)+1, printable(oneLine(cmp.Or(c.Title, "untitled"), 100)), printable(key)))
		}
	}
	if len(lines) == 0 {
		return
	}
	r.line()
	r.writeErr(r.a.style(dim, "sources:\n"+strings.Join(lines, "\n")) + "\n")
}

// guardrail prints a check that did not simply pass: a tripwire, a
// rejected tool call or result, or a check that failed. Passing checks
// print nothing (--json shows them).
func (r *renderer) guardrail(e *runlet.GuardrailChecked) {
	a := r.a
	name, msg := printable(e.Guardrail), printable(oneLine(e.Message, 200))
	var s string
	switch {
	case e.Action == runlet.GuardrailTrip:
		s = a.style(red, "⊘ guardrail "+name+" stopped the run ("+string(e.Stage)+")")
		if msg != "" {
			s += a.style(red, ": "+msg)
		}
		if e.Error != "" {
			s += a.style(dim, " [the guardrail failed: "+printable(oneLine(e.Error, 200))+"]")
		}
	case e.Action == runlet.GuardrailReject:
		s = a.style(red, "  ✗ guardrail "+name+" rejected the "+strings.ReplaceAll(string(e.Stage), "_", " ")) + ": " + msg
	case e.Error != "":
		s = a.style(dim, "· guardrail "+name+" failed, let through: "+printable(oneLine(e.Error, 200)))
	default:
		return
	}
	r.stopSpinner()
	if e.Stage == runlet.GuardOutput || e.Stage == runlet.GuardInput {
		if !r.outCol0 {
			r.writeOut("\n")
		}
	}
	r.line()
	r.writeErr(s + "\n")
}

// summary prints the usage line at the end of a run, with its cost when
// some of its calls were priced ("at least" when not all were).
func (r *renderer) summary(res *runlet.Result) {
	u, c := res.Usage, res.Cost
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopSpinner()
	r.line()
	var b strings.Builder
	fmt.Fprintf(&b, "%d model call%s · %d input + %d output tokens", u.Requests, plural(u.Requests), u.InputTokens, u.OutputTokens)
	var extra []string
	if u.ReasoningTokens > 0 {
		extra = append(extra, fmt.Sprintf("%d reasoning", u.ReasoningTokens))
	}
	if u.CachedInputTokens > 0 {
		extra = append(extra, fmt.Sprintf("%d cached", u.CachedInputTokens))
	}
	if u.WebSearchRequests > 0 {
		if u.WebSearchRequests == 1 {
			extra = append(extra, "1 web search")
		} else {
			extra = append(extra, fmt.Sprintf("%d web searches", u.WebSearchRequests))
		}
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	if r.toolCalls > 0 {
		fmt.Fprintf(&b, " · %d tool call%s", r.toolCalls, plural(r.toolCalls))
	}
	switch {
	case c.Known() && u.Requests > 0:
		b.WriteString(" · " + formatCost(c.Amount))
	case c.Unpriced < u.Requests:
		b.WriteString(" · at least " + formatCost(c.Amount))
	}
	fmt.Fprintf(&b, " · %s", roundDuration(time.Since(r.started)))
	r.writeErr(r.a.style(dim, b.String()) + "\n")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func roundDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func compactArgs(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// oneLine flattens s to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
