package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type ev struct{ typ, data, id string }

// readAll returns every event of the stream and the final error.
func readAll(r io.Reader) ([]ev, error) {
	rd := NewReader(r)
	var out []ev
	for {
		e, err := rd.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, ev{e.Type, string(e.Data), e.ID})
		if len(out) > 10000 {
			return out, errors.New("runaway")
		}
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"empty", "", nil},
		{"one event", "data: hello\n\n", []ev{{"", "hello", ""}}},
		{"no space after colon", "data:hello\n\n", []ev{{"", "hello", ""}}},
		{"only one space is stripped", "data:  two\n\n", []ev{{"", " two", ""}}},
		{"multi-line data", "data: a\ndata: b\ndata:\ndata: c\n\n", []ev{{"", "a\nb\n\nc", ""}}},
		{"CRLF", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", []ev{{"", "a\nb", ""}, {"", "c", ""}}},
		{"CR", "data: a\rdata: b\r\rdata: c\r\r", []ev{{"", "a\nb", ""}, {"", "c", ""}}},
		{"mixed endings", "data: a\r\n\ndata: b\r\rdata: c\n\r\n", []ev{{"", "a", ""}, {"", "b", ""}, {"", "c", ""}}},
		{"comments and keep-alives", ": ping\n\n:\ndata: x\n: mid-event comment\n\n", []ev{{"", "x", ""}}},
		{"event type", "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n",
			[]ev{{"message_start", "{}", ""}, {"ping", "{\"type\":\"ping\"}", ""}}},
		{"event type resets between events", "event: a\ndata: 1\n\ndata: 2\n\n", []ev{{"a", "1", ""}, {"", "2", ""}}},
		{"event type without data is dropped", "event: a\n\ndata: 2\n\n", []ev{{"", "2", ""}}},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []ev{{"", "a", "7"}, {"", "b", "7"}, {"", "c", ""}}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", []ev{{"", "a", "1"}, {"", "b", "1"}}},
		{"unknown fields and retry ignored", "retry: 100\nfoo: bar\ndata: a\n\n", []ev{{"", "a", ""}}},
		{"field without colon", "data\n\n", []ev{{"", "", ""}}},
		{"blank lines between events", "\n\n\ndata: a\n\n\n\ndata: b\n\n", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"last event without blank line", "data: a\n\ndata: b\n", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"last event without newline", "data: a\n\ndata: b", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"last line CR at EOF", "data: b\r", []ev{{"", "b", ""}}},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []ev{{"", "{\"a\":\"b:c\"}", ""}}},
		{"utf-8", "data: 東京 😀\n\n", []ev{{"", "東京 😀", ""}}},
		{"DONE", "data: {}\n\ndata: [DONE]\n\n", []ev{{"", "{}", ""}, {"", "[DONE]", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, wrap := range []struct {
				name string
				f    func(io.Reader) io.Reader
			}{
				{"whole", func(r io.Reader) io.Reader { return r }},
				{"one byte at a time", iotest.OneByteReader},
				{"half reads", iotest.HalfReader},
				{"data with EOF", iotest.DataErrReader},
			} {
				got, err := readAll(wrap.f(strings.NewReader(tt.in)))
				if err != nil {
					t.Fatalf("%s: %v", wrap.name, err)
				}
				if !equal(got, tt.want) {
					t.Errorf("%s:\n got %q\nwant %q", wrap.name, got, tt.want)
				}
			}
		})
	}
}

func equal(a, b []ev) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Lines far beyond the 64 KiB buffer, in every line ending.
func TestReaderLongLines(t *testing.T) {
	for _, n := range []int{64<<10 - 10, 64 << 10, 64<<10 + 1, 200 << 10, 3 << 20} {
		for _, eol := range []string{"\n", "\r\n", "\r"} {
			big := strings.Repeat("x", n)
			in := "data: " + big + eol + "data: y" + eol + eol + ": c" + eol + "data: small" + eol + eol
			got, err := readAll(iotest.HalfReader(strings.NewReader(in)))
			if err != nil {
				t.Fatalf("n=%d eol=%q: %v", n, eol, err)
			}
			if len(got) != 2 || got[0].data != big+"\ny" || got[1].data != "small" {
				t.Errorf("n=%d eol=%q: got %d events (first %d bytes)", n, eol, len(got), len(got[0].data))
			}
		}
	}
}

// A CR line ending that falls exactly at the end of the buffered data is
// not mistaken for CRLF later, and a CRLF split across reads is one ending.
func TestReaderCRLFSplitAcrossReads(t *testing.T) {
	for size := 1; size < 40; size++ {
		in := "data: abc\r\n\r\ndata: d\r\rdata: e\r\n\r\n"
		got, err := readAll(&chunked{s: in, n: size})
		if err != nil {
			t.Fatal(err)
		}
		want := []ev{{"", "abc", ""}, {"", "d", ""}, {"", "e", ""}}
		if !equal(got, want) {
			t.Errorf("chunk %d: got %q", size, got)
		}
	}
}

// chunked returns its string n bytes per Read.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := min(c.n, len(c.s), len(p))
	copy(p, c.s[:k])
	c.s = c.s[k:]
	return k, nil
}

// An event is delivered as soon as its blank line arrives, without waiting
// for more data, whatever the line ending: a live stream must not stall.
func TestReaderDoesNotWaitForMoreData(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		pr, pw := io.Pipe()
		rd := NewReader(pr)
		got := make(chan string, 1)
		go func() {
			e, err := rd.Next()
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- string(e.Data)
		}()
		go func() { _, _ = pw.Write([]byte("data: live" + eol + eol)) }()
		select {
		case s := <-got:
			if s != "live" {
				t.Errorf("eol %q: got %q", eol, s)
			}
			_ = pw.Close()
		case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
			t.Errorf("eol %q: the event was not delivered until more data came", eol)
			_ = pw.Close()
			<-got // the reader returns once the stream ends
		}
	}
}

// A long stream of small events with CR line endings is read event by
// event: it is not one line that overflows the event size limit.
func TestReaderLongCRStream(t *testing.T) {
	var b strings.Builder
	for range 5000 {
		b.WriteString("data: {\"x\":1}\r\r")
	}
	rd := NewReader(strings.NewReader(b.String()))
	rd.SetMaxEventSize(1 << 10)
	n := 0
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil || string(e.Data) != `{"x":1}` {
			t.Fatalf("event %d: %q %v", n, e.Data, err)
		}
		n++
	}
	if n != 5000 {
		t.Fatalf("events = %d", n)
	}
}

func TestReaderMaxEventSize(t *testing.T) {
	rd := NewReader(strings.NewReader("data: 12345\ndata: 678\n\n"))
	rd.SetMaxEventSize(8)
	if _, err := rd.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	// The error sticks.
	if _, err := rd.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("second err = %v", err)
	}
	// One huge line is stopped without buffering all of it.
	rd = NewReader(io.MultiReader(strings.NewReader("data: "), &endless{}))
	rd.SetMaxEventSize(1 << 20)
	if _, err := rd.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("endless line: err = %v", err)
	}
	// Within the limit is fine.
	rd = NewReader(strings.NewReader("data: 1234\ndata: 567\n\n"))
	rd.SetMaxEventSize(8)
	if e, err := rd.Next(); err != nil || string(e.Data) != "1234\n567" {
		t.Fatalf("got %q, %v", e.Data, err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// A read error is returned (wrapped) and sticks; a partial event is not
// dispatched on a read error, only at a clean EOF.
func TestReaderErrors(t *testing.T) {
	boom := errors.New("connection reset")
	rd := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: partial\n"), iotest.ErrReader(boom)))
	if e, err := rd.Next(); err != nil || string(e.Data) != "a" {
		t.Fatalf("first: %q %v", e.Data, err)
	}
	if _, err := rd.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if _, err := rd.Next(); !errors.Is(err, boom) {
		t.Fatalf("error does not stick: %v", err)
	}
	rd = NewReader(iotest.TimeoutReader(strings.NewReader("data: a\n\n")))
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); !errors.Is(err, iotest.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	// After EOF, Next keeps returning EOF.
	rd = NewReader(strings.NewReader("data: a"))
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := rd.Next(); err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
	}
}

// Data is reused between events; Type strings are interned.
func TestReaderReuse(t *testing.T) {
	rd := NewReader(strings.NewReader("event: x\ndata: first\n\nevent: x\ndata: second\n\n"))
	a, _ := rd.Next()
	typ := a.Type
	b, _ := rd.Next()
	if string(b.Data) != "second" || typ != "x" || b.Type != "x" {
		t.Fatalf("%q %q %q", b.Data, typ, b.Type)
	}
	allocs := testing.AllocsPerRun(100, func() {
		rd := NewReader(strings.NewReader(""))
		_ = rd
	})
	_ = allocs
}

// Reading a whole stream allocates one Reader and nothing per event: the
// buffers come back from the pool. (Measured: 1 allocation per stream of
// 1,000 events.)
func TestReaderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	var b bytes.Buffer
	for range 1000 {
		b.WriteString("event: delta\ndata: {\"type\":\"delta\",\"text\":\"hello\"}\n\n")
	}
	data := b.Bytes()
	src := bytes.NewReader(data)
	allocs := testing.AllocsPerRun(10, func() {
		src.Reset(data)
		rd := NewReader(src)
		n := 0
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
			n++
		}
		if n != 1000 {
			t.Fatalf("%d events", n)
		}
	})
	if allocs > 1 {
		t.Errorf("%.0f allocations per stream of 1000 events, want at most 1", allocs)
	}
}

// A Reader holds a small buffer, not one the size of its longest line: a
// line 16 times the buffer is read whole (and the per-event limit still
// applies to it), and the buffer does not grow.
func TestReaderSmallBuffer(t *testing.T) {
	long := strings.Repeat("x", 16*bufSize)
	rd := NewReader(strings.NewReader("data: " + long + "\n\ndata: short\n\n"))
	if rd.br.Size() != bufSize {
		t.Fatalf("buffer %d bytes, want %d", rd.br.Size(), bufSize)
	}
	if e, err := rd.Next(); err != nil || string(e.Data) != long {
		t.Fatalf("long line: %d bytes, %v", len(e.Data), err)
	}
	if rd.br.Size() != bufSize {
		t.Fatalf("buffer grew to %d bytes", rd.br.Size())
	}
	if e, err := rd.Next(); err != nil || string(e.Data) != "short" {
		t.Fatalf("after the long line: %q %v", e.Data, err)
	}
	rd = NewReader(strings.NewReader("data: " + long + "\n\n"))
	rd.SetMaxEventSize(4 * bufSize)
	if _, err := rd.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
}

// Release gives the buffers back: Next then fails instead of reading a
// buffer another stream now owns, Release twice is harmless, and a reader
// released at the end of its stream keeps returning io.EOF.
func TestReaderRelease(t *testing.T) {
	rd := NewReader(strings.NewReader("data: a\n\ndata: b\n\n"))
	if e, err := rd.Next(); err != nil || string(e.Data) != "a" {
		t.Fatalf("%q %v", e.Data, err)
	}
	rd.Release()
	rd.Release()
	if _, err := rd.Next(); err == nil || err == io.EOF {
		t.Fatalf("Next after Release: %v", err)
	}
	other := NewReader(strings.NewReader("data: c\n\n"))
	if e, err := other.Next(); err != nil || string(e.Data) != "c" {
		t.Fatalf("reader after a release: %q %v", e.Data, err)
	}
	for range 2 {
		if _, err := other.Next(); err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
	}
	if other.bufs != nil {
		t.Fatal("buffers not released at the end of the stream")
	}
	other.Release()
}

func BenchmarkReader(b *testing.B) {
	var buf bytes.Buffer
	for range 1000 {
		buf.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}` + "\n\n")
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rd := NewReader(bytes.NewReader(data))
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
	}
}

// The minimal hand-written line reader, for comparison.
func BenchmarkBufioScanner(b *testing.B) {
	var buf bytes.Buffer
	for range 1000 {
		buf.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}` + "\n\n")
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			_ = sc.Bytes()
		}
	}
}
