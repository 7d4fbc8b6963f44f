package uistream

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
)

// TestAGUIDeltaFrames holds the hand-built delta events to what
// encoding/json writes for the same events: one data line each, decoding
// to the same value (encoding/json also escapes <, > and &, which JSON
// does not need).
func TestAGUIDeltaFrames(t *testing.T) {
	frame := func(write func(w *frameWriter) error) string {
		rec := httptest.NewRecorder()
		w := newFrameWriter(rec, 0)
		if err := write(w); err != nil {
			t.Fatal(err)
		}
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String()
	}
	for _, delta := range []string{"", "plain", "quote \" back \\ slash", "line\nbreak\ttab", "<html> & \u2028\u2029", "bad \xff utf-8", "é中😀"} {
		for _, sub := range []string{"", "call_1/call_2"} {
			for _, at := range []time.Time{{}, time.UnixMilli(1796151278223)} {
				ev := &runlet.TextDelta{EventHeader: runlet.EventHeader{Time: at}, Delta: delta}
				got := frame(func(w *frameWriter) error {
					return deltaEvent(w, "TEXT_MESSAGE_CONTENT", ev, sub, "messageId", "r1-\"1", delta)
				})
				want := frame(func(w *frameWriter) error {
					return w.data(aguiMessageEvent{aguiBase: base("TEXT_MESSAGE_CONTENT", ev), SubagentRunID: sub, MessageID: "r1-\"1", Delta: &delta})
				})
				if !sameFrame(t, got, want) {
					t.Errorf("delta %q, sub %q, time %v:\n got %s\nwant %s", delta, sub, at, got, want)
				}
				got = frame(func(w *frameWriter) error {
					return deltaEvent(w, "TOOL_CALL_ARGS", ev, sub, "toolCallId", "call_9", delta)
				})
				want = frame(func(w *frameWriter) error {
					return w.data(aguiToolEvent{aguiBase: base("TOOL_CALL_ARGS", ev), SubagentRunID: sub, ToolCallID: "call_9", Delta: &delta})
				})
				if !sameFrame(t, got, want) {
					t.Errorf("args %q, sub %q, time %v:\n got %s\nwant %s", delta, sub, at, got, want)
				}
			}
		}
	}
}

// sameFrame reports whether two frames are one data line each holding the
// same JSON value.
func sameFrame(t *testing.T, got, want string) bool {
	t.Helper()
	var a, b any
	for i, f := range []string{got, want} {
		line, ok := strings.CutPrefix(f, "data: ")
		line, ok2 := strings.CutSuffix(line, "\n\n")
		if !ok || !ok2 || strings.Contains(line, "\n") {
			t.Fatalf("not one data line: %q", f)
		}
		v := &a
		if i == 1 {
			v = &b
		}
		if err := json.Unmarshal([]byte(line), v); err != nil {
			t.Fatalf("frame %q: %v", f, err)
		}
	}
	return reflect.DeepEqual(a, b)
}
