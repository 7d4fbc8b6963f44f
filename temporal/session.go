package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/temporal"
)

// AppendInput is the input of the activity that appends completed turns to
// a session.
type AppendInput struct {
	SessionID string           `json:"session_id"`
	After     int              `json:"after"` // messages the session holds before these
	Messages  []runlet.Message `json:"messages"`
}

func (d *Durable) sessions(id string) (runlet.SessionStore, error) {
	if d.cfg.Sessions == nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("runlet/temporal: session %q: the worker has no session store (Config.Sessions)", id), ErrTypeRun, nil)
	}
	return d.cfg.Sessions, nil
}

func (d *Durable) loadSession(ctx context.Context, sessionID string) ([]runlet.Message, error) {
	s, err := d.sessions(sessionID)
	if err != nil {
		return nil, err
	}
	msgs, err := s.LoadSession(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("runlet/temporal: loading session %q: %w", sessionID, err)
	}
	return msgs, nil
}

// appendSession appends a completed turn. It is idempotent: when an earlier
// attempt appended the messages but its completion was lost, the retry
// finds them in place and succeeds; a session that changed otherwise is a
// conflict, never retried.
func (d *Durable) appendSession(ctx context.Context, in AppendInput) error {
	s, err := d.sessions(in.SessionID)
	if err != nil {
		return err
	}
	err = s.AppendSession(ctx, in.SessionID, in.After, in.Messages)
	if err == nil || !errors.Is(err, runlet.ErrConflict) {
		return err
	}
	have, lerr := s.LoadSession(ctx, in.SessionID)
	if lerr == nil && len(have) == in.After+len(in.Messages) && sameMessages(have[in.After:], in.Messages) {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("runlet/temporal: saving session %q: %v", in.SessionID, err), ErrTypeRun, err)
}

func sameMessages(a, b []runlet.Message) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
