package httpc

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
)

// ErrBodyTooLarge is returned by ReadBody for a body over its limit.
var ErrBodyTooLarge = errors.New("response body too large")

// Chunk sizes of ReadBody for bodies of unknown length: the first chunk is
// pooled; later ones double up to maxChunk.
const (
	firstChunk = 32 << 10
	maxChunk   = 1 << 20
)

// scratch holds ReadBody's first chunks.
var scratch = sync.Pool{New: func() any { b := make([]byte, firstChunk); return &b }}

// ReadBody reads a whole response body of at most limit bytes (counted
// after decompression), in at most about limit bytes of memory before it
// gives up on a body that goes on. When the server declared the length it
// reads into one buffer of that size; otherwise it reads into chunks, the
// first one pooled, that are filled and never regrown, and joins them into
// one exact copy at the end. A body that fits the first chunk costs one
// allocation of its size; a larger one about twice its size, at the end.
func ReadBody(resp *http.Response, limit int64) ([]byte, error) {
	if n := resp.ContentLength; n > limit {
		return nil, ErrBodyTooLarge
	} else if n > 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	first := scratch.Get().(*[]byte)
	defer scratch.Put(first)
	chunks := [][]byte{(*first)[:0]}
	total := int64(0)
	for {
		c := &chunks[len(chunks)-1]
		if len(*c) == cap(*c) {
			if total > limit {
				return nil, ErrBodyTooLarge
			}
			// The next chunk doubles, but never past the limit (plus the
			// byte that tells a body over it).
			size := min(int64(2*cap(*c)), maxChunk, limit+1-total)
			if size <= 0 {
				size = 1
			}
			chunks = append(chunks, make([]byte, 0, size))
			c = &chunks[len(chunks)-1]
		}
		n, err := resp.Body.Read((*c)[len(*c):cap(*c)])
		*c = (*c)[:len(*c)+n]
		total += int64(n)
		if total > limit {
			return nil, ErrBodyTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out, nil
}

// decompress makes a gzip body that the transport left encoded (the user
// asked for it in Headers, or the transport has DisableCompression) read
// decompressed, so that every limit counts decompressed bytes, as it does
// for a body net/http decompressed itself.
func decompress(resp *http.Response) error {
	if resp.Uncompressed || !strings.EqualFold(strings.TrimSpace(resp.Header.Get("Content-Encoding")), "gzip") {
		return nil
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		return err
	}
	resp.Body = &gzipBody{Reader: zr, raw: resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength, resp.Uncompressed = -1, true
	return nil
}

type gzipBody struct {
	*gzip.Reader
	raw io.ReadCloser
}

func (b *gzipBody) Close() error { return b.raw.Close() }
