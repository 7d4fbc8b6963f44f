package uistream

import (
	"testing"

	"github.com/runlet/runlet"
)

// FuzzAGUIInput feeds decodeAGUI arbitrary bodies: it never panics, and a
// body it accepts is a resume with one decision per entry, the page's
// results of its tools' calls resuming their run, or a new run whose
// input is user messages only.
func FuzzAGUIInput(f *testing.F) {
	for _, seed := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"hi"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"a","role":"assistant","content":"x","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"t","role":"tool","toolCallId":"c","content":[{"type":"text","text":"ok"}]},{"id":"u","role":"user","content":[{"type":"image","source":{"type":"data","value":"aGk=","mimeType":"image/png"}}]}],"context":[{"description":"d","value":"v"}]}`,
		`{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"run_1:call%3A1","status":"resolved","payload":{"approved":true,"editedArgs":{"a":1}}}]}`,
		`{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"run_1:c","status":"cancelled"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"document","source":{"type":"url","value":"https://x/y.pdf"}}]}]}`,
		`{"threadId":"t","runId":"r","tools":[{"name":"f","description":"d","parameters":{"type":"object"}}],"messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"metadata":{"runlet":{"runId":"run_1"}}}]},{"id":"t","role":"tool","toolCallId":"c","content":"ok"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, tr, err := decodeAGUI(body)
		if err != nil {
			return
		}
		if in == nil || tr == nil || tr.chatID == "" {
			t.Fatalf("accepted without a thread: %+v", tr)
		}
		if len(in.Resume) > 0 {
			if tr.resume == "" || len(tr.decisions) != len(in.Resume) {
				t.Fatalf("resume %q with %d decisions for %d entries", tr.resume, len(tr.decisions), len(in.Resume))
			}
			return
		}
		if tr.resume != "" { // the page's results of its tools' calls
			if len(tr.decisions) == 0 || len(tr.input) != 0 {
				t.Fatalf("resume %q with %d decisions and %d input messages", tr.resume, len(tr.decisions), len(tr.input))
			}
			return
		}
		if len(tr.input) == 0 {
			t.Fatal("a new run without input")
		}
		for _, m := range tr.input {
			if m.Role != runlet.RoleUser {
				t.Fatalf("input message of role %q", m.Role)
			}
		}
	})
}
