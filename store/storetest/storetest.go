// Package storetest is the contract test suite for [runlet.Store]
// implementations: the in-memory store, store/sqlite, store/postgres, and
// any third-party store.
//
// A store's own test calls [Run] with a constructor:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) runlet.Store {
//			s, err := mystore.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The suite checks what the runtime relies on: lossless round-trips of every
// message part type, ordering, isolation between sessions, all-or-nothing
// appends guarded by the optimistic `after` check (also under concurrency),
// key-value state, checkpoints with an atomic claim, large values, and that
// a cancelled context writes nothing. Strings are compared as their JSON
// round-trip defines them (encoding/json turns invalid UTF-8 into U+FFFD);
// raw tool arguments come back as encoding/json writes a json.RawMessage:
// compacted, but with key order, number spellings, escapes and even bytes
// that are not UTF-8 as received.
//
// A store meant for several application instances should also pass the
// suite on [Alternate], which spreads the calls over several instances of the
// store sharing one database. [Benchmark] measures appending a turn and
// loading a 1,000-message session.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

// Run runs the contract suite against the stores newStore returns.
//
// newStore is called once per subtest, with that subtest's t, so it can
// register cleanups with t.Cleanup. It may return a fresh store each time or
// the same shared one: every subtest uses session IDs, keys and run IDs of
// its own, made unique with random suffixes. Subtests run one after another;
// several of them use the store from many goroutines at once, as concurrent
// runs do.
func Run(t *testing.T, newStore func(t *testing.T) runlet.Store) {
	t.Helper()
	t.Run("Session", func(t *testing.T) { runSession(t, newStore) })
	t.Run("State", func(t *testing.T) { runState(t, newStore) })
	t.Run("Checkpoint", func(t *testing.T) { runCheckpoint(t, newStore) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, newStore(t)) })
}

// uid returns an ID unique to this call: prefix, the test's name and a
// random suffix, so a store shared between subtests (or test runs, as with a
// database server) sees no collisions.
func uid(t testing.TB, prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := t.Name()
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return prefix + "-" + name + "-" + hex.EncodeToString(b[:])
}

func isConflict(err error) bool { return errors.Is(err, runlet.ErrConflict) }

// mustLoad loads a session or fails the test.
func mustLoad(t testing.TB, s runlet.SessionStore, sessionID string) []runlet.Message {
	t.Helper()
	msgs, err := s.LoadSession(context.Background(), sessionID)
	if err != nil {
		t.Fatalf("LoadSession(%q): %v", sessionID, err)
	}
	return msgs
}

// mustAppend appends or fails the test.
func mustAppend(t testing.TB, s runlet.SessionStore, sessionID string, after int, msgs []runlet.Message) {
	t.Helper()
	if err := s.AppendSession(context.Background(), sessionID, after, msgs); err != nil {
		t.Fatalf("AppendSession(%q, after=%d, %d messages): %v", sessionID, after, len(msgs), err)
	}
}

// checkMessages fails the test unless got equals want, part by part, after
// both are put in the canonical form the JSON round-trip defines (see
// canonical).
func checkMessages(t testing.TB, what string, got, want []runlet.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d messages, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := canonical(got[i]), canonical(want[i])
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: message %d differs\n got: %s\nwant: %s", what, i, describe(g), describe(w))
		}
	}
}

// canonical returns a deep copy of m in the form runlet's JSON round-trip
// defines as lossless: tool-call arguments as encoding/json writes a
// json.RawMessage (compact, HTML-escaped; empty arguments become {}), and
// empty byte slices and part lists as nil. Stores that keep JSON must not
// otherwise change the bytes: key order, number spelling and escapes of the
// arguments are compared exactly.
func canonical(m runlet.Message) runlet.Message {
	out := runlet.Message{Role: m.Role}
	if len(m.Parts) == 0 {
		return out
	}
	out.Parts = make([]runlet.Part, len(m.Parts))
	for i, p := range m.Parts {
		switch p := p.(type) {
		case runlet.ToolCallPart:
			p.Arguments = canonicalArgs(p.Arguments)
			out.Parts[i] = p
		case runlet.ImagePart:
			p.Data = cloneBytes(p.Data)
			out.Parts[i] = p
		case runlet.FilePart:
			p.Data = cloneBytes(p.Data)
			out.Parts[i] = p
		default:
			out.Parts[i] = p
		}
	}
	return out
}

func canonicalArgs(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(raw)
	if err != nil {
		// Invalid JSON cannot survive a JSON store; keep it as is so the
		// comparison shows it.
		return bytes.Clone(raw)
	}
	return b
}

func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

// describe renders a message for a failure report, eliding long values.
func describe(m runlet.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{role=%s", m.Role)
	for i, p := range m.Parts {
		s := fmt.Sprintf("%#v", p)
		if len(s) > 300 {
			s = s[:300] + fmt.Sprintf("...(%d chars)", len(s))
		}
		fmt.Fprintf(&b, " part[%d]=%s", i, s)
	}
	b.WriteString("}")
	return b.String()
}

// text returns a message with a single text part; the suite uses its text
// to identify messages.
func text(role runlet.Role, s string) runlet.Message {
	return runlet.Message{Role: role, Parts: []runlet.Part{runlet.TextPart{Text: s}}}
}

// texts returns the text of each message.
func texts(msgs []runlet.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Text()
	}
	return out
}
