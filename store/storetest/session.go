package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
)

// partCase is one message whose round-trip the suite checks.
type partCase struct {
	name string
	msg  runlet.Message
}

// binary returns n bytes covering every byte value, NUL and 0xFF included.
func binary(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/256)
	}
	return b
}

// partCases are messages covering every part type and the values that trip
// up stores: NUL bytes, unicode, JSON escapes, nested arguments, bytes.
func partCases() []partCase {
	return []partCase{
		{"Text", runlet.UserText("Hello, world.")},
		{"TextUnicode", runlet.AssistantText("天气 ☀️ — naïve café, emoji 👩‍💻, RTL עברית, NUL:\x00:, tab\t, newline\n, quote \" backslash \\ <b>&amp;</b> \u2028")},
		{"TextEmpty", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{}}}},
		{"ReasoningFull", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ReasoningPart{
			Text:      "The user wants the weather; call get_weather first.",
			Signature: "EqQBCkYIBxgCKkD3+signature/with==padding",
			ID:        "rs_68af1c2b3d4e5f60",
			Provider:  "anthropic",
		}}}},
		{"ReasoningEncrypted", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ReasoningPart{
			Encrypted: "gAAAAABo" + strings.Repeat("Zm9vYmFyYmF6", 200) + "==",
			ID:        "rs_0123",
			Provider:  "openai.responses",
		}}}},
		{"ToolCall", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{
			ID: "call_abc123", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Shanghai","unit":"celsius"}`),
		}}}},
		{"ToolCallNestedUnicode", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{
			ID:   "toolu_01A09q90qw90lq917835lq9",
			Name: "search",
			// Key order, number spellings and \u escapes must survive as written.
			Arguments: json.RawMessage(`{"z":1,"a":[1.50,-0,1e3,{"k":null,"t":true}],"城市":"上海","esc":"\u00e9\n\"q\"","deep":{"x":{"y":{"z":["😀",{"":""}]}}},"html":"<a href='x'>&</a>"}`),
			ItemID:    "fc_67ab",
			Provider:  "openai.responses",
		}}}},
		{"ToolCallSpacedArguments", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{
			ID: "call_sp", Name: "f", Arguments: json.RawMessage("{\n  \"a\": [1, 2],\n  \"b\": \"x y\"\n}"),
		}}}},
		{"ToolCallInvalidUTF8Arguments", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{
			// Raw arguments are kept as received, even bytes that are not
			// UTF-8 (a user's edited arguments, say).
			ID: "call_latin1", Name: "f", Arguments: json.RawMessage("{\"name\":\"caf\xe9\"}"),
		}}}},
		{"ToolCallEmptyArguments", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{
			ID: "call_empty", Name: "now",
		}}}},
		{"ToolCallEdited", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{
			// A person edited the arguments on approval: both are kept.
			ID: "call_ed", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/tmp/a.bak"}`),
			OriginalArguments: json.RawMessage(`{"path":"/tmp/a"}`),
		}}}},
		{"ToolCallEditedCutOff", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{
			// ... also when the model's were cut off (not valid JSON).
			ID: "call_cut", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/tmp/a"}`),
			OriginalArguments: json.RawMessage(`{"path":"/tm`),
		}}}},
		{"ToolResult", runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{
			CallID: "call_abc123", Name: "get_weather", Content: `{"temp":21.5,"sky":"clear"}`,
		}}}},
		{"ToolResultError", runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{
			CallID: "call_x", Name: "delete_file", Content: "permission denied: /etc/passwd", IsError: true,
		}}}},
		{"ImageBytes", runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.TextPart{Text: "What is in this picture?"},
			runlet.ImagePart{MediaType: "image/png", Data: binary(4096), Detail: "high"},
		}}},
		{"ImageURL", runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.ImagePart{URL: "https://example.com/cat.jpg?size=large&x=%20", Detail: "low"},
		}}},
		{"FileBytes", runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.FilePart{Name: "report.pdf", MediaType: "application/pdf", Data: append([]byte("%PDF-1.7\n"), binary(2048)...)},
		}}},
		{"FileURL", runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.FilePart{Name: "notes.txt", URL: "https://example.com/notes.txt", MediaType: "text/plain"},
		}}},
		{"ToolResultParts", runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{
			CallID: "call_shot", Name: "screenshot", Content: "the screen",
			Parts: []runlet.Part{
				runlet.TextPart{Text: "the screen"},
				runlet.ImagePart{MediaType: "image/png", Data: binary(4096)},
				runlet.FilePart{Name: "page.pdf", MediaType: "application/pdf", Data: []byte("%PDF-1.7")},
				runlet.AudioPart{MediaType: "audio/wav", Data: binary(512)},
				runlet.ImagePart{URL: "https://example.com/before.png"},
			},
			Structured: json.RawMessage(`{"width":640,"height":480}`),
		}}}},
		{"Audio", runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.AudioPart{MediaType: "audio/mpeg", Data: binary(300)},
			runlet.AudioPart{URL: "https://example.com/a.mp3", MediaType: "audio/mpeg"},
		}}},
		{"NoParts", runlet.Message{Role: runlet.RoleAssistant}},
		{"AllParts", runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "think", Signature: "sig", Provider: "anthropic"},
			runlet.ReasoningPart{Encrypted: "redacted-blob", Provider: "anthropic"},
			runlet.TextPart{Text: "Let me check two cities."},
			runlet.ToolCallPart{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			runlet.ToolCallPart{ID: "c2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"東京"}`)},
			runlet.ToolResultPart{CallID: "c0", Content: "odd but legal", IsError: true},
			runlet.ImagePart{MediaType: "image/jpeg", Data: []byte{0xff, 0xd8, 0xff, 0x00}},
			runlet.FilePart{Name: "a.bin", Data: []byte{0}},
		}}},
	}
}

func runSession(t *testing.T, newStore func(t *testing.T) runlet.Store) {
	t.Run("UnknownIsEmpty", func(t *testing.T) {
		s := newStore(t)
		msgs, err := s.LoadSession(t.Context(), uid(t, "s"))
		if err != nil {
			t.Fatalf("LoadSession of an unknown session: %v; want no error", err)
		}
		if len(msgs) != 0 {
			t.Fatalf("LoadSession of an unknown session returned %d messages", len(msgs))
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		for _, c := range partCases() {
			t.Run(c.name, func(t *testing.T) {
				sid := uid(t, "s")
				mustAppend(t, s, sid, 0, []runlet.Message{c.msg})
				checkMessages(t, "round-trip", mustLoad(t, s, sid), []runlet.Message{c.msg})
			})
		}
	})
	t.Run("RoundTripOneBatch", func(t *testing.T) {
		s := newStore(t)
		sid := uid(t, "s")
		var want []runlet.Message
		for _, c := range partCases() {
			want = append(want, c.msg)
		}
		mustAppend(t, s, sid, 0, want)
		checkMessages(t, "round-trip", mustLoad(t, s, sid), want)
	})
	t.Run("Ordering", func(t *testing.T) { testOrdering(t, newStore(t)) })
	t.Run("Isolation", func(t *testing.T) { testSessionIsolation(t, newStore(t)) })
	t.Run("Conflict", func(t *testing.T) { testConflict(t, newStore(t)) })
	t.Run("RaceSameAfter", func(t *testing.T) { testRaceSameAfter(t, newStore(t)) })
	t.Run("ConcurrentAppends", func(t *testing.T) { testConcurrentAppends(t, newStore(t)) })
	t.Run("NoAliasing", func(t *testing.T) { testSessionAliasing(t, newStore(t)) })
	t.Run("LargeMessage", func(t *testing.T) { testLargeMessage(t, newStore(t)) })
	t.Run("ThousandMessages", func(t *testing.T) { testThousandMessages(t, newStore(t)) })
}

// testOrdering appends batches of different sizes, past 10 and 100
// messages so that an ordering by text instead of number shows.
func testOrdering(t *testing.T, s runlet.Store) {
	sid := uid(t, "s")
	var want []runlet.Message
	for batch, size := range []int{1, 3, 7, 2, 11, 1, 40, 60} {
		var msgs []runlet.Message
		for i := range size {
			role := runlet.RoleUser
			if (len(want)+i)%2 == 1 {
				role = runlet.RoleAssistant
			}
			msgs = append(msgs, text(role, fmt.Sprintf("batch %d message %d (#%d)", batch, i, len(want)+i)))
		}
		mustAppend(t, s, sid, len(want), msgs)
		want = append(want, msgs...)
		checkMessages(t, fmt.Sprintf("after batch %d", batch), mustLoad(t, s, sid), want)
	}
}

func testSessionIsolation(t *testing.T, s runlet.Store) {
	base := uid(t, "s")
	// IDs that collide in careless SQL (LIKE patterns, case folding,
	// trailing spaces, quoting) or careless key building (separators).
	ids := []string{
		base, base + "%", base + "_", strings.ToUpper(base), base + " ",
		base + "'; DROP TABLE messages; --", base + "/x", base + ":x", base + "\\x",
		base + "-ü-" + strings.Repeat("long", 100),
	}
	for i, id := range ids {
		msgs := []runlet.Message{text(runlet.RoleUser, fmt.Sprintf("for session %d", i))}
		if i%2 == 0 {
			msgs = append(msgs, text(runlet.RoleAssistant, fmt.Sprintf("reply in session %d", i)))
		}
		if err := s.AppendSession(t.Context(), id, 0, msgs); err != nil {
			t.Fatalf("AppendSession(session %d %q): %v", i, id, err)
		}
	}
	for i, id := range ids {
		got := mustLoad(t, s, id)
		want := []runlet.Message{text(runlet.RoleUser, fmt.Sprintf("for session %d", i))}
		if i%2 == 0 {
			want = append(want, text(runlet.RoleAssistant, fmt.Sprintf("reply in session %d", i)))
		}
		checkMessages(t, fmt.Sprintf("session %d %q", i, id), got, want)
	}
}

func testConflict(t *testing.T, s runlet.Store) {
	ctx := t.Context()
	sid := uid(t, "s")
	first := []runlet.Message{runlet.UserText("one"), runlet.AssistantText("two")}
	mustAppend(t, s, sid, 0, first)

	for _, after := range []int{0, 1, 3, 100, -1} {
		err := s.AppendSession(ctx, sid, after, []runlet.Message{runlet.UserText(fmt.Sprintf("stale %d", after))})
		if !isConflict(err) {
			t.Errorf("AppendSession with after=%d on a 2-message session: err = %v; want an error wrapping runlet.ErrConflict", after, err)
		}
	}
	// A conflicting batch of several messages must not leave a prefix behind.
	err := s.AppendSession(ctx, sid, 1, []runlet.Message{runlet.UserText("a"), runlet.AssistantText("b"), runlet.UserText("c")})
	if !isConflict(err) {
		t.Errorf("AppendSession of 3 messages with after=1: err = %v; want ErrConflict", err)
	}
	checkMessages(t, "after rejected appends", mustLoad(t, s, sid), first)

	// An empty batch at the right length is a no-op.
	if err := s.AppendSession(ctx, sid, 2, nil); err != nil {
		t.Errorf("AppendSession of no messages with after=2: %v", err)
	}
	// An unknown session has length 0.
	unknown := uid(t, "s")
	if err := s.AppendSession(ctx, unknown, 1, []runlet.Message{runlet.UserText("x")}); !isConflict(err) {
		t.Errorf("AppendSession with after=1 on an unknown session: err = %v; want ErrConflict", err)
	}
	if got := mustLoad(t, s, unknown); len(got) != 0 {
		t.Errorf("unknown session has %d messages after a rejected append", len(got))
	}
	// The right length still works.
	mustAppend(t, s, sid, 2, []runlet.Message{runlet.UserText("three")})
	checkMessages(t, "after a good append", mustLoad(t, s, sid), append(first, runlet.UserText("three")))
}

// testRaceSameAfter starts many writers with the same `after` at once:
// exactly one may win.
func testRaceSameAfter(t *testing.T, s runlet.Store) {
	const writers = 12
	sid := uid(t, "s")
	mustAppend(t, s, sid, 0, []runlet.Message{runlet.UserText("start")})
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, writers)
	)
	for w := range writers {
		wg.Go(func() {
			batch := []runlet.Message{
				text(runlet.RoleAssistant, fmt.Sprintf("w%d call", w)),
				text(runlet.RoleTool, fmt.Sprintf("w%d result", w)),
				text(runlet.RoleAssistant, fmt.Sprintf("w%d answer", w)),
			}
			<-start
			errs[w] = s.AppendSession(context.Background(), sid, 1, batch)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for w, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Fatalf("writers %d and %d both appended after 1 message", winner, w)
			}
			winner = w
		case !isConflict(err):
			t.Errorf("writer %d: %v; want nil or ErrConflict", w, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer succeeded")
	}
	want := []runlet.Message{
		runlet.UserText("start"),
		text(runlet.RoleAssistant, fmt.Sprintf("w%d call", winner)),
		text(runlet.RoleTool, fmt.Sprintf("w%d result", winner)),
		text(runlet.RoleAssistant, fmt.Sprintf("w%d answer", winner)),
	}
	checkMessages(t, "after the race", mustLoad(t, s, sid), want)
}

// testConcurrentAppends has writers append whole batches to one session,
// retrying on conflict as a runtime would. The history must be a
// concatenation of whole batches, each writer's in its own order.
func testConcurrentAppends(t *testing.T, s runlet.Store) {
	const (
		writers = 8
		batches = 6
	)
	sid := uid(t, "s")
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		conflicts int
		failed    = make(chan error, writers)
	)
	for w := range writers {
		wg.Go(func() {
			ctx := context.Background()
			for b := range batches {
				size := 1 + (w+b)%4
				batch := make([]runlet.Message, size)
				for i := range batch {
					batch[i] = text(runlet.RoleAssistant, fmt.Sprintf("w%d b%d %d/%d", w, b, i, size))
				}
				for attempt := 0; ; attempt++ {
					if attempt == 1000 {
						failed <- fmt.Errorf("writer %d batch %d: still conflicting after 1000 attempts", w, b)
						return
					}
					cur, err := s.LoadSession(ctx, sid)
					if err != nil {
						failed <- fmt.Errorf("writer %d: LoadSession: %w", w, err)
						return
					}
					err = s.AppendSession(ctx, sid, len(cur), batch)
					if err == nil {
						break
					}
					if !isConflict(err) {
						failed <- fmt.Errorf("writer %d: AppendSession: %w (want nil or ErrConflict)", w, err)
						return
					}
					mu.Lock()
					conflicts++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	got := texts(mustLoad(t, s, sid))
	next := make([]int, writers) // next batch expected from each writer
	total := 0
	for i := 0; i < len(got); {
		var w, b, k, size int
		if _, err := fmt.Sscanf(got[i], "w%d b%d %d/%d", &w, &b, &k, &size); err != nil || w < 0 || w >= writers {
			t.Fatalf("message %d = %q: not written by this test", i, got[i])
		}
		if k != 0 || b != next[w] {
			t.Fatalf("message %d = %q: expected the start of writer %d's batch %d (history %q)", i, got[i], w, next[w], got)
		}
		for j := range size {
			wantText := fmt.Sprintf("w%d b%d %d/%d", w, b, j, size)
			if i+j >= len(got) || got[i+j] != wantText {
				t.Fatalf("batch w%d b%d interleaved or cut at message %d: history %q", w, b, i+j, got)
			}
		}
		next[w]++
		i += size
		total++
	}
	if total != writers*batches {
		t.Fatalf("history holds %d batches, want %d", total, writers*batches)
	}
	t.Logf("%d batches from %d writers, %d conflicts retried", total, writers, conflicts)
}

// testSessionAliasing checks that a store keeps no reference to the
// caller's messages and hands out none to its own.
func testSessionAliasing(t *testing.T, s runlet.Store) {
	sid := uid(t, "s")
	mk := func() []runlet.Message {
		return []runlet.Message{
			{Role: runlet.RoleAssistant, Parts: []runlet.Part{
				runlet.TextPart{Text: "original"},
				runlet.ToolCallPart{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)},
				runlet.ImagePart{MediaType: "image/png", Data: []byte{1, 2, 3}},
			}},
		}
	}
	in := mk()
	mustAppend(t, s, sid, 0, in)
	// Change everything the caller still holds.
	in[0].Role = runlet.RoleUser
	in[0].Parts[0] = runlet.TextPart{Text: "changed by caller"}
	in[0].Parts[1].(runlet.ToolCallPart).Arguments[5] = '9'
	in[0].Parts[2].(runlet.ImagePart).Data[0] = 9
	checkMessages(t, "after the caller changed its appended messages", mustLoad(t, s, sid), mk())

	out := mustLoad(t, s, sid)
	out[0].Parts[0] = runlet.TextPart{Text: "changed by reader"}
	out[0].Parts[1].(runlet.ToolCallPart).Arguments[5] = '8'
	out[0].Parts[2].(runlet.ImagePart).Data[0] = 8
	out = append(out[:1], runlet.UserText("appended to the loaded slice"))
	_ = out
	checkMessages(t, "after a reader changed loaded messages", mustLoad(t, s, sid), mk())
}

// testLargeMessage stores one message of several megabytes.
func testLargeMessage(t *testing.T, s runlet.Store) {
	sid := uid(t, "s")
	big := runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{
		runlet.TextPart{Text: strings.Repeat("All work and no play makes Jack a dull boy. 多语言 ", 40_000)}, // ~2.2 MB
		runlet.ImagePart{MediaType: "image/png", Data: binary(3 << 20)},                                   // 3 MiB (4 MiB as base64)
		runlet.ToolResultPart{CallID: "c", Content: strings.Repeat(`{"row":[1,2,3]},`, 20_000)},
	}}
	msgs := []runlet.Message{runlet.UserText("before"), big, runlet.AssistantText("after")}
	mustAppend(t, s, sid, 0, msgs)
	got := mustLoad(t, s, sid)
	checkMessages(t, "large message", got, msgs)
	if d := got[1].Parts[1].(runlet.ImagePart).Data; !bytes.Equal(d, binary(3<<20)) {
		t.Fatalf("image data of %d bytes came back as %d bytes, or changed", 3<<20, len(d))
	}
}

// conversation returns n messages that look like a real session: user
// prompts, assistant tool calls, tool results, answers.
func conversation(n int, tag string) []runlet.Message {
	msgs := make([]runlet.Message, 0, n)
	for i := 0; len(msgs) < n; i++ {
		turn := []runlet.Message{
			runlet.UserText(fmt.Sprintf("%s question %d: what is the weather in city %d?", tag, i, i)),
			{Role: runlet.RoleAssistant, Parts: []runlet.Part{
				runlet.ReasoningPart{Text: "I should call the tool.", Signature: fmt.Sprintf("sig-%d", i), Provider: "anthropic"},
				runlet.ToolCallPart{ID: fmt.Sprintf("call_%s_%d", tag, i), Name: "get_weather", Arguments: json.RawMessage(fmt.Sprintf(`{"city":"City %d","unit":"celsius"}`, i))},
			}},
			{Role: runlet.RoleTool, Parts: []runlet.Part{
				runlet.ToolResultPart{CallID: fmt.Sprintf("call_%s_%d", tag, i), Name: "get_weather", Content: fmt.Sprintf(`{"temp":%d,"sky":"clear"}`, i%40)},
			}},
			runlet.AssistantText(fmt.Sprintf("%s answer %d: it is %d degrees and clear.", tag, i, i%40)),
		}
		msgs = append(msgs, turn...)
	}
	return msgs[:n]
}

func testThousandMessages(t *testing.T, s runlet.Store) {
	sid := uid(t, "s")
	want := conversation(1000, "t")
	for i := 0; i < len(want); i += 100 {
		mustAppend(t, s, sid, i, want[i:i+100])
	}
	// Another session alongside must not disturb it.
	other := uid(t, "s")
	mustAppend(t, s, other, 0, conversation(10, "o"))
	checkMessages(t, "1,000-message session", mustLoad(t, s, sid), want)
	if err := s.AppendSession(t.Context(), sid, 999, []runlet.Message{runlet.UserText("x")}); !errors.Is(err, runlet.ErrConflict) {
		t.Fatalf("AppendSession with after=999 on 1,000 messages: %v; want ErrConflict", err)
	}
	mustAppend(t, s, sid, 1000, []runlet.Message{runlet.UserText("one more")})
	if got := mustLoad(t, s, sid); len(got) != 1001 || got[1000].Text() != "one more" {
		t.Fatalf("after appending message 1,001: %d messages, last %q", len(got), got[len(got)-1].Text())
	}
}
