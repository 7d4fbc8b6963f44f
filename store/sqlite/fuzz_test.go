package sqlite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/sqlite"
)

// FuzzRoundTrip stores arbitrary session IDs, texts, tool arguments and
// state through one store: what is stored comes back as its JSON
// round-trip defines, state bytes come back exactly, and arguments that are
// not JSON make the append fail without storing anything.
func FuzzRoundTrip(f *testing.F) {
	f.Add("session", "key", "hello", []byte(`{"city":"Paris"}`), []byte("value"))
	f.Add("", "", "", []byte(``), []byte{})
	f.Add("s'; DROP TABLE runlet_messages; --", "k%_", "NUL\x00 and \u2028", []byte(`{"a":[1,2,{"b":null}],"<":"&"}`), []byte{0, 0xff, 0})
	f.Add("ü/:?#", "ключ", "\xff\xfe invalid utf-8", []byte(`{"unterminated":`), []byte("\x00"))
	f.Add("x", "y", "z", []byte(" {\n\"spaced\" : true }\n"), []byte(nil))

	ctx := context.Background()
	s, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })

	f.Fuzz(func(t *testing.T, sessionID, key, text string, args, value []byte) {
		if err := s.SetState(ctx, sessionID, key, value); err != nil {
			t.Fatalf("SetState: %v", err)
		}
		got, err := s.GetState(ctx, sessionID, key)
		if err != nil || !bytes.Equal(got, value) {
			t.Fatalf("GetState = %q, %v; want %q", got, err, value)
		}

		before, err := s.LoadSession(ctx, sessionID)
		if err != nil {
			t.Fatal(err)
		}
		msg := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.TextPart{Text: text},
			runlet.ToolCallPart{ID: "c", Name: "f", Arguments: json.RawMessage(args)},
		}}
		// The expected form is the JSON round-trip of msg, encoded again:
		// encoding/json writes invalid UTF-8 as \ufffd the first time and
		// as the character itself after that.
		want, merr := json.Marshal(msg)
		if merr == nil {
			var rt runlet.Message
			if err := json.Unmarshal(want, &rt); err != nil {
				t.Fatalf("runlet.Message does not decode its own JSON %s: %v", want, err)
			}
			if want, err = json.Marshal(rt); err != nil {
				t.Fatal(err)
			}
		}
		err = s.AppendSession(ctx, sessionID, len(before), []runlet.Message{msg})
		after, lerr := s.LoadSession(ctx, sessionID)
		if lerr != nil {
			t.Fatal(lerr)
		}
		if merr != nil {
			// Not JSON arguments: the append must fail and store nothing.
			if err == nil || errors.Is(err, runlet.ErrConflict) || len(after) != len(before) {
				t.Fatalf("append of unencodable arguments %q: err=%v, %d -> %d messages", args, err, len(before), len(after))
			}
			return
		}
		if err != nil {
			t.Fatalf("AppendSession: %v", err)
		}
		if len(after) != len(before)+1 {
			t.Fatalf("%d -> %d messages after one append", len(before), len(after))
		}
		gotJSON, err := json.Marshal(after[len(after)-1])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotJSON, want) {
			t.Fatalf("round-trip changed the message\n got: %s\nwant: %s", gotJSON, want)
		}
		if utf8.ValidString(text) && after[len(after)-1].Text() != text {
			t.Fatalf("text %q came back as %q", text, after[len(after)-1].Text())
		}
	})
}
