package redis

import (
	"encoding/json"
	"fmt"

	"github.com/runlet/runlet"
)

// limits bound what the Store reads and writes: one message, state value or
// checkpoint (rowBytes), and one session (its message count and bytes).
// Someone other than this program can write to the Redis, so values are
// measured on the server (STRLEN, HSTRLEN, LLEN and the loading script)
// before they are read.
type limits struct {
	RowBytes        int64
	SessionBytes    int64
	SessionMessages int64
}

func (s *Store) limits() limits {
	return limits{RowBytes: 64 << 20, SessionBytes: 256 << 20, SessionMessages: 100_000}
}

func (l limits) row(what string, size int64) error {
	if size <= l.RowBytes {
		return nil
	}
	return fmt.Errorf("redis: %s is %d bytes, over the limit of %d", what, size, l.RowBytes)
}

func (l limits) session(sessionID string, messages, bytes int64) error {
	if messages > l.SessionMessages {
		return fmt.Errorf("redis: session %q has %d messages, over the limit of %d", sessionID, messages, l.SessionMessages)
	}
	if bytes > l.SessionBytes {
		return fmt.Errorf("redis: session %q has over %d bytes, over the limit of %d", sessionID, bytes, l.SessionBytes)
	}
	return nil
}

func messageName(sessionID string, seq int) string {
	return fmt.Sprintf("message %d of session %q", seq, sessionID)
}

func stateName(sessionID, key string) string {
	return fmt.Sprintf("state %q of session %q", key, sessionID)
}

func checkpointName(runID string) string { return fmt.Sprintf("checkpoint of run %q", runID) }

func decodeMessage(sessionID string, seq int, raw []byte, m *runlet.Message) error {
	if err := json.Unmarshal(raw, m); err != nil {
		return fmt.Errorf("%s: %w", messageName(sessionID, seq), err)
	}
	return nil
}
