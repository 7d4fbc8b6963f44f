package bedrock

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
)

// FastRetries makes m's retries wait a millisecond, for tests.
func FastRetries(m *Model) {
	m.cfg.client.MinBackoff, m.cfg.client.MaxBackoff = time.Millisecond, 2*time.Millisecond
}

// NewFrameReader exposes the event-stream frame reader to the fuzz test.
var NewFrameReader = newFrameReader

// Next reads one message's event type and payload.
func (f *frameReader) Next() (string, []byte, error) {
	m, err := f.next()
	if err != nil {
		return "", nil, err
	}
	return header(m, ":event-type"), m.Payload, nil
}

// DecodeStream runs the ConverseStream decoder on a body, without a
// server.
func DecodeStream(m *Model, body []byte) (*runlet.ModelResponse, error) {
	resp := &http.Response{StatusCode: 200, Body: io.NopCloser(bytes.NewReader(body)), Header: http.Header{}}
	return httpc.Assemble(func(emit func(runlet.StreamEvent) bool) error {
		return m.readStream(context.Background(), resp, "test-model", emit)
	})
}
