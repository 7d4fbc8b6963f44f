package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/jsonscan"
)

// The Responses body fast path (respBodyScan) against encoding/json: what
// it accepts it decodes exactly as encoding/json, and decodeBody returns
// the same response or error either way.

func respBodyDump(w *respResponse, items []respOutItem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "id=%q model=%q status=%q error=%v", w.ID, w.Model, w.Status, w.Error != nil)
	if w.Usage != nil {
		fmt.Fprintf(&b, " usage=%+v", *w.Usage)
	}
	if w.IncompleteDetails != nil {
		fmt.Fprintf(&b, " incomplete=%q", w.IncompleteDetails.Reason)
	}
	b.WriteByte('\n')
	for i := range items {
		// %#v tells nil from empty slices, which respFinalText does not
		// need; lengths and parts are what matter.
		it := &items[i]
		fmt.Fprintf(&b, "item type=%q id=%q enc=%q call=%q name=%q args=%q content=%d%+v summary=%d%+v\n", it.Type, it.ID,
			it.EncryptedContent, it.CallID, it.Name, it.Arguments, len(it.Content), it.Content, len(it.Summary), it.Summary)
	}
	return b.String()
}

// checkRespBody compares the two paths on a body; it reports whether the
// fast path accepted it.
func checkRespBody(t testing.TB, body []byte) bool {
	t.Helper()
	m := respModel("http://unused")
	resp := &http.Response{StatusCode: 200, Header: http.Header{"X-Request-Id": {"req_1"}}, Body: io.NopCloser(bytes.NewReader(nil))}
	fastResp, fastErr := m.decodeBody(resp, body, true)
	slowResp, slowErr := m.decodeBody(resp, body, false)
	if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) || !reflect.DeepEqual(fastResp, slowResp) {
		t.Fatalf("%q\nfast: %+v, %v\nslow: %+v, %v", body, fastResp, fastErr, slowResp, slowErr)
	}
	var w respResponse
	var items [8]respOutItem
	b := respBodyScan{s: new(jsonscan.Scanner), w: &w, items: items[:]}
	if !b.scan(body) {
		return false
	}
	var typed respTypedResponse
	if err := json.Unmarshal(body, &typed); err != nil {
		t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, body)
	}
	fast, slow := respBodyDump(&w, items[:b.n]), respBodyDump(&typed.respResponse, typed.Output)
	if fast != slow {
		t.Fatalf("%q\nfast path:\n%s\nencoding/json:\n%s", body, fast, slow)
	}
	return true
}

// respRecordedBodies returns the recorded non-streamed bodies and the
// response objects of the recorded streams' events.
func respRecordedBodies(t testing.TB) [][]byte {
	var out [][]byte
	for _, dir := range []string{respFixtureDir, filepath.Join("testdata", "output")} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case strings.HasSuffix(e.Name(), ".response.json"):
				out = append(out, raw)
			case strings.HasSuffix(e.Name(), ".sse"), strings.HasSuffix(e.Name(), ".jsonl"):
				for _, line := range strings.Split(string(raw), "\n") {
					line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
					var ev struct {
						Response json.RawMessage `json:"response"`
					}
					if json.Unmarshal([]byte(line), &ev) == nil && len(ev.Response) > 0 && ev.Response[0] == '{' {
						out = append(out, ev.Response)
					}
				}
			}
		}
	}
	return out
}

func TestRespScanBodyFixtures(t *testing.T) {
	bodies := respRecordedBodies(t)
	fast := 0
	for _, body := range bodies {
		if checkRespBody(t, body) {
			fast++
		}
	}
	t.Logf("fast path: %d of %d bodies", fast, len(bodies))
	if len(bodies) < 20 || fast*10 < len(bodies)*7 {
		t.Errorf("fast path took %d of %d bodies", fast, len(bodies))
	}
}

func TestRespScanBodyShapes(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		fast       bool
	}{
		{"text", `{"id":"resp_1","object":"response","created_at":1,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[],"logprobs":[]}]}],"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":1},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":11},"tools":[{"type":"function","name":"f","parameters":{}}],"text":{"format":{"type":"text"}}}`, true},
		{"function call", `{"id":"r","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}","status":"completed"}]}`, true},
		{"reasoning", `{"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b\u00e9"}],"encrypted_content":"enc"},{"type":"message","content":[{"type":"refusal","refusal":"no"}]}]}`, true},
		{"raw reasoning", `{"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"t"}]}]}`, true},
		{"incomplete", `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","content":[{"type":"output_text","text":"cut"}]}]}`, true},
		{"no status", `{"id":"r","output":[]}`, true},
		{"other items", `{"status":"completed","output":[{"type":"computer_call","id":"cu_1","status":"completed","action":{"type":"click"}},{"type":"message","content":[{"type":"output_text","text":"x"}]}]}`, true},
		{"empty annotations", `{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"x","annotations":[]}]}]}`, true},
		{"hosted tool item", `{"status":"completed","output":[{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}]}`, false},
		{"annotations", `{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"x","annotations":[{"type":"url_citation"}]}]}]}`, false},
		{"nulls", `{"id":null,"status":"completed","usage":null,"output":[{"type":"message","id":null,"content":null,"summary":null}]}`, true},
		{"repeated scalar", `{"status":"in_progress","status":"completed","output":[]}`, true},

		{"failed", `{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}`, false},
		{"error envelope", `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, false},
		{"repeated output", `{"output":[],"output":[]}`, false},
		{"repeated content", `{"output":[{"type":"message","content":[],"content":[]}]}`, false},
		{"case-folded", `{"Status":"completed","output":[]}`, false},
		{"content string", `{"output":[{"type":"message","content":"x"}]}`, false},
		{"unknown item with typed fields", `{"output":[{"type":"x","name":5}]}`, false},
		{"nine items", `{"output":[{},{},{},{},{},{},{},{},{}]}`, false},
		{"float tokens", `{"usage":{"input_tokens":1.5}}`, false},
		{"malformed", `{"output":[`, false},
		{"html", `<html></html>`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkRespBody(t, []byte(tc.data)); got != tc.fast {
				t.Errorf("fast path accepted: %v, want %v", got, tc.fast)
			}
		})
	}
}

// FuzzResponsesScanBody: whatever body the fast path accepts,
// encoding/json decodes without error to the same values, and the
// responses are the same.
func FuzzResponsesScanBody(f *testing.F) {
	f.Add([]byte(`{"id":"resp_1","status":"completed","model":"m","output":[{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Hi\u00e9","annotations":[]}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}],"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":1},"output_tokens":2,"total_tokens":11},"error":null}`))
	f.Add([]byte(`{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[{"type":"reasoning","summary":[{"text":"a"}],"encrypted_content":"e"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkRespBody(t, body)
	})
}
