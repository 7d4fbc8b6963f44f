package bedrock

import "time"

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
