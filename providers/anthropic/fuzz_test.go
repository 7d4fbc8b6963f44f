package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/jsonscan"
	"github.com/runlet/runlet/modelkit"
)

// Seed corpora: the recorded streams in testdata/fixtures (f.Add below) and
// the files in testdata/fuzz/<FuzzName>/.

func fixtureStreams(f testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		switch {
		case strings.HasSuffix(name, ".sse"):
			out = append(out, data)
		case strings.HasSuffix(name, ".jsonl"):
			var b bytes.Buffer
			for line := range bytes.Lines(data) {
				var head struct{ Type string }
				_ = json.Unmarshal(line, &head)
				b.WriteString("event: " + head.Type + "\ndata: ")
				b.Write(bytes.TrimSpace(line))
				b.WriteString("\n\n")
			}
			out = append(out, b.Bytes())
		}
	}
	return out
}

// FuzzDecoder feeds arbitrary bytes as a Messages event stream. The decoder
// must not panic or hang, must fail only with a *runlet.ProviderError, and
// when it finishes, its deltas must add up to the response it assembled.
func FuzzDecoder(f *testing.F) {
	for _, s := range fixtureStreams(f) {
		f.Add(s)
	}
	f.Add(sseBody("message_start", evStart, "message_stop", evStop))
	f.Add(sseBody("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	m := newTestModel("http://unused", Config{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var deltas []runlet.StreamEvent
		var resp *runlet.ModelResponse
		err := m.readStream(context.Background(), &http.Response{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(data))}, func(ev runlet.StreamEvent) bool {
			if resp != nil {
				t.Fatal("event after StreamDone")
			}
			if ev.Kind == runlet.StreamDone {
				resp = ev.Response
				return true
			}
			deltas = append(deltas, ev)
			return true
		})
		if err != nil {
			var perr *runlet.ProviderError
			if !errors.As(err, &perr) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if resp != nil {
				t.Fatal("error after StreamDone")
			}
			return
		}
		if resp == nil {
			t.Fatal("no error and no response")
		}
		var acc modelkit.Accumulator
		for _, d := range deltas {
			switch d.Kind {
			case runlet.StreamTextDelta, runlet.StreamReasoningDelta:
				if d.Delta == "" {
					t.Fatalf("empty delta %+v", d)
				}
			case runlet.StreamToolCallDelta:
				if d.Index < 0 {
					t.Fatalf("negative index %+v", d)
				}
			default:
				t.Fatalf("unexpected kind %+v", d)
			}
			acc.Add(d)
		}
		got := acc.Message()
		if got.Text() != resp.Message.Text() || got.Reasoning() != resp.Message.Reasoning() {
			t.Fatalf("deltas %q/%q, response %q/%q", got.Text(), got.Reasoning(), resp.Message.Text(), resp.Message.Reasoning())
		}
		calls, want := got.ToolCalls(), resp.Message.ToolCalls()
		if len(calls) != len(want) {
			t.Fatalf("%d calls from deltas, %d in response", len(calls), len(want))
		}
		for i := range calls {
			if calls[i].ID != want[i].ID || calls[i].Name != want[i].Name || string(calls[i].Arguments) != string(want[i].Arguments) {
				t.Fatalf("call %d: %+v vs %+v", i, calls[i], want[i])
			}
		}
		for _, p := range resp.Message.Parts {
			if r, ok := p.(runlet.ReasoningPart); ok && r.Provider != "anthropic" {
				t.Fatalf("reasoning without provider: %+v", r)
			}
		}
		if resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens || resp.Usage.InputTokens < 0 || resp.Usage.OutputTokens < 0 {
			t.Fatalf("usage %+v", resp.Usage)
		}
	})
}

// FuzzParseDelta checks the fast path against encoding/json: whenever it
// accepts an event, encoding/json must accept it too and fill the same
// values.
func FuzzParseDelta(f *testing.F) {
	for _, s := range fixtureStreams(f) {
		sc := bufio.NewScanner(bytes.NewReader(s))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, "content_block_delta") {
				f.Add([]byte(data))
			}
		}
	}
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"b\\c\/d\b\f\n\r\t\u00e9\u4e2d"}}`,
		`{"index":12,"delta":{"text":"x","type":"text_delta"},"type":"content_block_delta"}`,
		`{"type":"content_block_delta","index":0,"delta":{"text":"a"},"delta":{"type":"text_delta"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d\ude00"}}`,
		`{"type":"content_block_delta","index":-0,"delta":{}}`,
		`{"type":"content_block_delta","index":1.0,"delta":{}}`,
		`{"type":"content_block_delta","index":01,"delta":{}}`,
		`{"type":"content_block_delta","Index":1,"delta":{}}`,
		` { "type" : "content_block_delta" , "index" : 3 , "delta" : { "type" : "signature_delta" , "signature" : "s" } } ` + "\n",
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}`,
		"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var dl eventDelta
		index, ok := parseDelta(new(jsonscan.Scanner), data, &dl)
		if !ok {
			return
		}
		var ev streamEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, data)
		}
		if ev.Type != "content_block_delta" || ev.Index != index || !reflect.DeepEqual(ev.Delta, dl) {
			t.Fatalf("fast path %d %+v, encoding/json %d %+v: %q", index, dl, ev.Index, ev.Delta, data)
		}
	})
}

// TestParseDelta pins the fast path's decisions on a few inputs.
func TestParseDelta(t *testing.T) {
	tests := []struct {
		in    string
		ok    bool
		index int
		want  eventDelta
	}{
		{`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"hi \"x\" \u00e9\n"}}   `, true, 2, eventDelta{Type: "text_delta", Text: "hi \"x\" é\n"}},
		{`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`, true, 1, eventDelta{Type: "input_json_delta", PartialJSON: `{"a":`}},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"日本"}}`, true, 0, eventDelta{Type: "thinking_delta", Thinking: "日本"}},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}`, false, 0, eventDelta{}},
		{`{"type":"content_block_start","index":0}`, false, 0, eventDelta{}},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d\ude00 \ud83d"}}`, true, 0, eventDelta{Type: "text_delta", Text: "😀 \uFFFD"}},
		{"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xff\"}}", true, 0, eventDelta{Type: "text_delta", Text: "\uFFFD"}},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}`, false, 0, eventDelta{}},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}x`, false, 0, eventDelta{}},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}`, false, 0, eventDelta{}},
		{`{"type":"content_block_delta","index":1e0,"delta":{}}`, false, 0, eventDelta{}},
	}
	for _, tt := range tests {
		var dl eventDelta
		index, ok := parseDelta(new(jsonscan.Scanner), []byte(tt.in), &dl)
		if ok != tt.ok || (ok && (index != tt.index || !reflect.DeepEqual(dl, tt.want))) {
			t.Errorf("%s: %v %d %+v", tt.in, ok, index, dl)
		}
	}
}

// TestDecodeDeltaAllocs pins the fast path's cost: one allocation per
// delta event (its text), with escapes or without.
func TestDecodeDeltaAllocs(t *testing.T) {
	d := newDecoder("anthropic", 0)
	for _, data := range [][]byte{
		[]byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello, world"}}`),
		[]byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"line\n\"quoted\" \u00e9\ud83d\ude00"}}`),
	} {
		var dl eventDelta
		if n := testing.AllocsPerRun(100, func() {
			if _, ok := parseDelta(&d.scan, data, &dl); !ok {
				t.Fatal("fast path declined")
			}
		}); n != 1 {
			t.Errorf("%s: %v allocations, want 1", data, n)
		}
	}
}
