package httpc

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
)

// ErrBodyTooLarge is returned by ReadBody for a body over its limit.
var ErrBodyTooLarge = errors.New("response body too large")

// maxPooledBody bounds the scratch buffers ReadBody keeps for reuse.
const maxPooledBody = 1 << 20

// scratch holds the buffers ReadBody reads bodies of unknown length into.
var scratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// ReadBody reads a whole response body of at most limit bytes. When the
// server declared the length it reads into one buffer of that size;
// otherwise it reads into a pooled scratch buffer and returns an exact
// copy, instead of growing a new buffer step by step as io.ReadAll does.
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
	buf := scratch.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			scratch.Put(buf)
		}
	}()
	buf.Reset()
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return nil, err
	case int64(buf.Len()) > limit:
		return nil, ErrBodyTooLarge
	}
	return bytes.Clone(buf.Bytes()), nil
}
