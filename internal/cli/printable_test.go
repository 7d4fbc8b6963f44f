package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

// hostile holds what a terminal would act on: an OSC 52 clipboard write,
// a title change, an erase-line, a carriage return over the line, a bell,
// a C1 CSI (UTF-8 and a lone byte), DEL, and bidirectional overrides and
// isolates that show what follows in another order.
const hostile = "ok\x1b]52;c;cHduZWQ=\x07\x1b]0;title\x1b\\\x1b[2K\rfake\u009b31m\x9b\x7f done\u202e# fr- mr\u202c\u2067x\u2069"

// rawControls reports a control character other than newline or tab, a
// C1 control or a bidirectional override or isolate in s.
func rawControls(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return true
		}
	}
	return strings.Contains(s, "\x9b")
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"":                               "",
		"plain text\n\tindent":           "plain text\n\tindent",
		"héllo 世界 🙂":                     "héllo 世界 🙂",
		"a\x1b[2Kb":                      `a\x1b[2Kb`,
		"line\rover":                     "lineover",
		"crlf\r\n":                       "crlf\n",
		"bell\a":                         `bell\x07`,
		"c1 \u009b31m":                   `c1 \u009b31m`,
		"lone \x9b byte":                 "lone \uFFFD byte",
		"del\x7f":                        `del\x7f`,
		"\x1b]52;c;cHduZWQ=\x07":         `\x1b]52;c;cHduZWQ=\x07`,
		"rm -rf ~ \u202e# \u202c":        `rm -rf ~ \u202e# \u202c`,
		"\u202a\u202b\u202d\u2066\u2068": `\u202a\u202b\u202d\u2066\u2068`,
		"marks \u200f\u200e stay":        "marks \u200f\u200e stay",
		"עברית ועוד":                     "עברית ועוד",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
	if rawControls(printable(hostile)) {
		t.Errorf("printable(hostile) = %q", printable(hostile))
	}
	if n := testing.AllocsPerRun(100, func() { printable("an ordinary answer, ünïcode too\n") }); n != 0 {
		t.Errorf("%v allocations for a clean string", n)
	}
}

// Model text, reasoning, tool names, arguments and results, and errors
// reach the terminal as text: no escape sequence of theirs is written raw.
// Text on a pipe is data and passes unchanged.
func TestRendererPrintsNoControlSequences(t *testing.T) {
	call := runlet.ToolCallPart{ID: "c1", Name: "tool" + hostile, Arguments: json.RawMessage(`{"x":"` + hostile + `"`)}
	events := []runlet.Event{
		&runlet.ReasoningDelta{Delta: hostile},
		&runlet.TextDelta{Delta: hostile},
		&runlet.ModelFinished{},
		&runlet.ContextPrepared{Changed: true, Notes: []string{hostile}},
		&runlet.ToolStarted{Call: call},
		&runlet.ToolFinished{Call: call, Result: runlet.ToolResultPart{CallID: "c1", Content: hostile}},
		&runlet.ToolStarted{Call: call},
		&runlet.ToolFinished{Call: call, Result: runlet.ToolResultPart{CallID: "c1", Content: hostile, IsError: true}},
		&runlet.GuardrailChecked{Guardrail: hostile, Stage: runlet.GuardToolCall, Action: runlet.GuardrailReject, Message: hostile},
		&runlet.GuardrailChecked{Guardrail: hostile, Stage: runlet.GuardInput, Action: runlet.GuardrailTrip, Message: hostile, Error: hostile},
		&runlet.OutputWithdrawn{Guardrail: hostile},
	}
	for _, tty := range []bool{true, false} {
		var out, errb bytes.Buffer
		a := newApp(strings.NewReader("n\n"), &out, &errb, func(string) string { return "" })
		a.stdoutTTY = tty
		r := a.newRenderer(true)
		for _, ev := range events {
			r.event(ev)
		}
		r.close()
		if _, ok := a.askApprovals(r, []runlet.ToolCallPart{call}); !ok {
			t.Fatal("approval prompt failed")
		}
		a.failure(&runlet.ProviderError{Provider: "p", StatusCode: 400, Message: hostile}, nil)
		a.failure(&runlet.PolicyError{Policy: "p" + hostile, Err: errors.New(hostile)}, nil)
		a.failure(errors.New(hostile), nil)
		if rawControls(errb.String()) {
			t.Errorf("stdout a terminal=%v: stderr has raw controls: %q", tty, errb.String())
		}
		switch {
		case tty && rawControls(out.String()):
			t.Errorf("stdout, a terminal, has raw controls: %q", out.String())
		case !tty && !strings.Contains(out.String(), hostile):
			t.Errorf("stdout, a pipe, lost the text as the model wrote it: %q", out.String())
		}
	}
}

// What "runlet mcp serve" prints when it stops on an error, which may
// quote a client, reaches the terminal as text.
func TestServeFailedPrintable(t *testing.T) {
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errb, func(string) string { return "" })
	if code := a.serveFailed(errors.New(hostile)); code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	if rawControls(errb.String()) || !strings.HasPrefix(errb.String(), "runlet mcp serve: ok") {
		t.Errorf("stderr = %q", errb.String())
	}
}
