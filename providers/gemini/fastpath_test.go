package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzChunkScanner checks the fast path against encoding/json: whenever
// it accepts a response, encoding/json decodes it without error to the
// same value. Seeds: every chunk and body recorded in testdata, and the
// files in testdata/fuzz/FuzzChunkScanner.
func FuzzChunkScanner(f *testing.F) {
	for _, b := range recordedResponses(f) {
		f.Add(b)
	}
	for _, s := range []string{
		okChunk,
		`{"candidates":[{"content":{"parts":[{"text":"a\n\"b\" \u00e9\ud83d\ude00 \ud83d","thought":true,"thoughtSignature":"c2ln"}],"role":"model"},"index":0}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"id":"c1","name":"f","args":{"a":[1, 2]}},"thoughtSignature":"s"}]},"finishReason":"STOP"}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":null}}]}}]}`,
		`{"candidates":[],"usageMetadata":{"promptTokenCount":3,"promptTokensDetails":[{"modality":"TEXT","tokenCount":3}]}}`,
		`{"candidates":[{"index":1},{"index":0,"content":{"parts":[]}}],"modelVersion":"m","responseId":"r"}`,
		`{"candidates":[{"content":{"parts":[{"TEXT":"x"}]}}]}`, `{"Candidates":[]}`, `{"candidates":[],"candidates":[]}`,
		`{"candidates":[{"content":{"parts":[{"text":null}]}}]}`, `{"promptFeedback":{"blockReason":"SAFETY"}}`,
		`{"error":{"code":429}}`, `{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"a","data":"AA=="}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"executableCode":{"code":"x"}}]},"safetyRatings":[]}]}`,
		`{"usageMetadata":{"totalTokenCount":1.5}}`, `{"candidates":[{"index":"0"}]}`, `{}`, `[]`, `{"modelVersion":"m"} x`,
		"{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\xff\"}]}}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c chunkScanner
		var fast wireResponse
		if !c.scan(data, &fast) {
			return
		}
		checkScanned(t, data, fast)
		// A pooled scanner for a whole body, used before: args alias the
		// body, storage is reused; the result is the same.
		p := getChunkScanner()
		defer p.release()
		var prev wireResponse
		p.scan([]byte(`{"candidates":[{"content":{"parts":[{"text":"x"},{"functionCall":{"name":"f","args":{}}}]}}],"modelVersion":"m","responseId":"r"}`), &prev)
		if !p.scan(data, &p.resp) {
			t.Fatalf("a used pooled scanner declined %q", data)
		}
		checkScanned(t, data, p.resp)
	})
}

// checkScanned compares what the fast path read from data with what
// encoding/json decodes.
func checkScanned(t *testing.T, data []byte, fast wireResponse) {
	t.Helper()
	var slow wireResponse
	if err := json.Unmarshal(data, &slow); err != nil {
		t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, data)
	}
	normalize(&fast)
	normalize(&slow)
	if !reflect.DeepEqual(fast, slow) {
		f, _ := json.Marshal(fast)
		s, _ := json.Marshal(slow)
		t.Fatalf("fast path %s, encoding/json %s, for %q", f, s, data)
	}
}

// normalize makes empty slices nil, which the fast path and encoding/json
// leave differently and nothing tells apart.
func normalize(r *wireResponse) {
	if len(r.Candidates) == 0 {
		r.Candidates = nil
	}
	for i := range r.Candidates {
		if len(r.Candidates[i].Content.Parts) == 0 {
			r.Candidates[i].Content.Parts = nil
		}
	}
}

// recordedResponses returns every response body and stream chunk in
// testdata.
func recordedResponses(t testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join("testdata", "*.response.*"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, name := range append(files, more...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".json") {
			out = append(out, b)
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := strings.TrimPrefix(sc.Text(), "data: ")
			if strings.HasPrefix(line, "{") {
				out = append(out, []byte(line))
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d recorded responses", len(out))
	}
	return out
}

// TestChunkScannerTakesRecorded: the fast path reads every recorded
// response that has no error or blocked prompt, so they do not fall back.
func TestChunkScannerTakesRecorded(t *testing.T) {
	for _, b := range recordedResponses(t) {
		var c chunkScanner
		var r wireResponse
		if !c.scan(b, &r) && !bytes.Contains(b, []byte(`"error"`)) && !bytes.Contains(b, []byte(`"promptFeedback"`)) {
			t.Errorf("fast path declined %.200s", b)
		}
	}
}

// TestChunkScannerAllocs pins the fast path's cost: one allocation per
// streamed text chunk (its text), escaped or not, once the scanner's
// storage has grown.
func TestChunkScannerAllocs(t *testing.T) {
	for _, data := range [][]byte{
		[]byte(`{"candidates":[{"content":{"parts":[{"text":"sun "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":1000,"totalTokenCount":1040},"modelVersion":"gemini-3-flash-preview","responseId":"g1"}`),
		[]byte(`{"candidates":[{"content":{"parts":[{"text":"a\n\"b\" \u00e9\ud83d\ude00","thought":true}],"role":"model"},"index":0,"safetyRatings":[{"category":"X","probability":"NEGLIGIBLE"}]}],"modelVersion":"m"}`),
	} {
		var c chunkScanner
		var r wireResponse
		if err := c.decode(data, &r); err != nil || !c.scan(data, &r) {
			t.Fatalf("%s: %v", data, err)
		}
		if n := testing.AllocsPerRun(100, func() { c.scan(data, &r) }); n != 1 {
			t.Errorf("%s: %v allocations, want 1", data, n)
		}
	}
}
