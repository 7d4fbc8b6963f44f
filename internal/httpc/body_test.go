package httpc

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

// A gzip body the transport left encoded (the user asked for gzip in
// Headers) is read decompressed, success and error bodies alike, and
// counted decompressed against the limit.
func TestExplicitGzipDecompressed(t *testing.T) {
	zip := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = io.WriteString(w, s)
		_ = w.Close()
		return b.Bytes()
	}
	status, body := http.StatusOK, zip(`{"ok":true}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c := fastClient(0)
	c.Header = http.Header{"Accept-Encoding": {"gzip"}}
	ctx := context.Background()
	var got []byte
	read := func(limit int64) func(resp *http.Response) (*runlet.ModelResponse, error) {
		return func(resp *http.Response) (*runlet.ModelResponse, error) {
			var err error
			got, err = c.ReadAll(resp, limit)
			return &runlet.ModelResponse{}, err
		}
	}
	if _, err := c.Generate(ctx, Call{URL: srv.URL}, read(100)); err != nil || string(got) != `{"ok":true}` {
		t.Fatalf("body %q, err %v", got, err)
	}
	body = zip(strings.Repeat("a", 200)) // 200 bytes decompressed, fewer on the wire
	if _, err := c.Generate(ctx, Call{URL: srv.URL}, read(100)); !errors.Is(err, runlet.ErrResponseTooLarge) {
		t.Fatalf("err = %v, want ErrResponseTooLarge", err)
	}
	status, body = http.StatusBadRequest, zip(`{"error":{"message":"bad thing"}}`)
	_, err := c.Generate(ctx, Call{URL: srv.URL}, read(100))
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.Message != "bad thing" {
		t.Fatalf("err = %v, want the decompressed error message", err)
	}
}

// ReadBody of an unknown length reads exactly the body, across chunks,
// and refuses one byte more than the limit.
func TestReadBodyChunks(t *testing.T) {
	for _, n := range []int{0, 1, firstChunk - 1, firstChunk, firstChunk + 1, 3*firstChunk + 7, 2 << 20} {
		want := bytes.Repeat([]byte("x"), n)
		resp := &http.Response{ContentLength: -1, Body: io.NopCloser(bytes.NewReader(want))}
		got, err := ReadBody(resp, int64(n))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("n=%d: got %d bytes, err %v", n, len(got), err)
		}
		resp = &http.Response{ContentLength: -1, Body: io.NopCloser(bytes.NewReader(append(want, 'y')))}
		if _, err := ReadBody(resp, int64(n)); !errors.Is(err, ErrBodyTooLarge) {
			t.Errorf("n=%d+1: err %v, want ErrBodyTooLarge", n, err)
		}
	}
}
