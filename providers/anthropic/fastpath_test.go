package anthropic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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

// The recorded responses all take the fast path.
func TestResponseScanReadsFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.response.json"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(f, "error") {
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
