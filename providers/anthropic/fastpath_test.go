package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/jsonscan"
)

// responseBodies are the recorded non-streamed responses and shapes the
// fast path must read or decline: every one decodes to what encoding/json
// gives.
func responseBodies(t testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.response.json"))
	if err != nil || len(files) == 0 {
		t.Fatal("no fixtures", err)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	for _, s := range []string{
		`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi \u00e9\n\"q\""}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":4,"service_tier":"standard"}}`,
		`{"type":"message","content":[{"type":"tool_use","id":"toolu_1","name":"get","input":{ "a" : [1, 2] }},{"type":"tool_use","id":"toolu_2","name":"n","input":"str"}],"stop_reason":"tool_use","usage":{"output_tokens_details":{"thinking_tokens":7}}}`,
		`{"type":"message","content":[{"type":"thinking","thinking":"hmm","signature":"EqQB=="},{"type":"redacted_thinking","data":"abc"},{"type":"server_tool_use","id":"srv","name":"web_search","input":{"q":"x"}},{"type":"web_search_tool_result","tool_use_id":"srv","content":[{"type":"web_search_result","url":"u"}]}]}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"ID":"folded","type":"message"}`,
		`{"id":null,"stop_reason":null,"usage":{"input_tokens":null}}`,
		`{"content":null}`, `{"usage":null}`, `{"content":[],"content":[]}`, `{"usage":{},"usage":{}}`,
		`{"content":[{"type":"tool_use","input":null}]}`, `{"content":[{"Type":"text"}]}`, `{"usage":{"Input_Tokens":1}}`,
		`{"usage":{"output_tokens_details":null}}`, `{"usage":{"output_tokens_details":{"thinking_tokens":1},"output_tokens_details":{}}}`,
		`{"usage":{"input_tokens":1.5}}`, `{"usage":{"input_tokens":12345678901234567890}}`, `{"id":"a","id":"b"}`,
		`{"id":"bad \xff utf8","model":"\ud83d\ude00 \ud800"}`, `{"content":[{"type":"text","text":"x"}]`, `{"id":1}`, `null`, `[]`, ``, `{} x`,
		`{"type":"message","stop_reason":"something_new","container":{"id":"c"},"content":[{"type":"text","text":"a","citations":[{"k":1}]}]}`,
		`  {"type" : "message" , "content" : [ { "type" : "text" , "text" : "spaced" } ] }  `,
	} {
		out = append(out, []byte(s))
	}
	return out
}

func TestResponseScanMatchesEncodingJSON(t *testing.T) {
	fast := 0
	for _, body := range responseBodies(t) {
		if checkResponseScan(t, body) {
			fast++
		}
	}
	if fast < 12 {
		t.Errorf("only %d bodies took the fast path", fast)
	}
}

// The recorded responses all take the fast path, but for those with
// server tools or citations, which encoding/json decodes (see scanBlock).
func TestResponseScanReadsFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.response.json"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(f, "error") || bytes.Contains(b, []byte(`"tool_use_id"`)) || bytes.Contains(b, []byte(`"citations": [`)) {
			continue
		}
		r := getResponseScan()
		if !r.scan(b) {
			t.Errorf("%s: the fast path declined", f)
		}
		r.release()
	}
}

// checkResponseScan compares the fast path with encoding/json on body,
// reporting whether the fast path read it.
func checkResponseScan(t *testing.T, body []byte) bool {
	t.Helper()
	var want wireResponse
	werr := json.Unmarshal(body, &want)
	r := getResponseScan()
	defer r.release()
	if !r.scan(body) {
		return false
	}
	if werr != nil {
		t.Fatalf("fast path read %q, encoding/json fails: %v", body, werr)
	}
	if !reflect.DeepEqual(r.w, want) {
		t.Fatalf("%q:\nfast %+v\nslow %+v", body, r.w, want)
	}
	// Again, with the model string kept from the first read.
	if !r.scan(body) || !reflect.DeepEqual(r.w, want) {
		t.Fatalf("%q read again:\nfast %+v\nslow %+v", body, r.w, want)
	}
	return true
}

func FuzzResponseScan(f *testing.F) {
	for _, b := range responseBodies(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkResponseScan(t, body) })
}

// streamEventData returns every event's data in the recorded streams and
// shapes of other events the fast path must read or decline.
func streamEventData(t testing.TB) [][]byte {
	var out [][]byte
	for _, s := range fixtureStreams(t) {
		sc := bufio.NewScanner(bytes.NewReader(s))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				out = append(out, []byte(data))
			} else if strings.HasPrefix(line, "{") {
				out = append(out, []byte(line)) // .jsonl chunks
			}
		}
	}
	for _, s := range []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1,"output_tokens_details":{"thinking_tokens":0}}}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"abc"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":null,"cache_read_input_tokens":4}}`,
		`{"type":"message_stop"}`, `{"type":"content_block_stop","index":2}`, `{"type":"ping"}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 1"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"url":"u"}}}`,
		`{"type":"message_delta","usage":{},"usage":{}}`, `{"delta":{},"delta":{}}`, `{"Type":"message_stop"}`,
		`{"message":{"usage":{"output_tokens_details":{"thinking_tokens":1}},"usage":{}}}`, `{"message":null}`,
		`{"content_block":{"type":"tool_use","input":null}}`, `{"index":1.5}`, `{"index":null,"type":null}`, `{}`, `[]`, `null`,
		`{"type":"message_stop"} x`, `{"type":"message_stop"`, `{"delta":{"stop_reason":"\u0065nd_turn"}}`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// checkParseEvent compares the fast path with encoding/json on data,
// reporting whether the fast path read it.
func checkParseEvent(t *testing.T, s *jsonscan.Scanner, data []byte) bool {
	t.Helper()
	fresh := func() streamEvent {
		ev := streamEvent{Usage: unsetUsage}
		ev.Message.Usage = unsetUsage
		return ev
	}
	fast := fresh()
	if !parseEvent(s, data, &fast) {
		return false
	}
	slow := fresh()
	if err := json.Unmarshal(data, &slow); err != nil {
		t.Fatalf("fast path read %q, encoding/json fails: %v", data, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q:\nfast %+v\nslow %+v", data, fast, slow)
	}
	return true
}

func TestParseEventMatchesEncodingJSON(t *testing.T) {
	var s jsonscan.Scanner
	fast, all := 0, 0
	for _, data := range streamEventData(t) {
		all++
		if checkParseEvent(t, &s, data) {
			fast++
		}
	}
	if fast < all/2 {
		t.Errorf("only %d of %d events took the fast path", fast, all)
	}
}

// Every recorded event but the malformed ones takes a fast path, except
// server tool blocks and citations (see scanBlock).
func TestParseEventReadsFixtures(t *testing.T) {
	var s jsonscan.Scanner
	for _, st := range fixtureStreams(t) {
		sc := bufio.NewScanner(bytes.NewReader(st))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || !json.Valid([]byte(data)) || strings.Contains(data, `"citation`) ||
				strings.Contains(data, `"server_tool_use"`) || strings.Contains(data, `_tool_result"`) {
				continue
			}
			var dl eventDelta
			var ev streamEvent
			if _, ok := parseDelta(&s, []byte(data), &dl); !ok && !parseEvent(&s, []byte(data), &ev) {
				t.Errorf("no fast path took %s", data)
			}
		}
	}
}

func FuzzParseEvent(f *testing.F) {
	for _, d := range streamEventData(f) {
		f.Add(d)
	}
	var s jsonscan.Scanner
	f.Fuzz(func(t *testing.T, data []byte) { checkParseEvent(t, &s, data) })
}
