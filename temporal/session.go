package temporal

import (
	"bytes"
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
	// Refs name the parts of Messages kept in the payload store.
	Refs []PartRef `json:"refs,omitempty"`
}

func (d *Durable) sessions(id string) (runlet.SessionStore, error) {
	if d.cfg.Sessions == nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("runlet/temporal: session %q: the worker has no session store (Config.Sessions)", id), ErrTypeRun, nil)
	}
	return d.cfg.Sessions, nil
}

// sessionLoad is the load activity's result: the session's messages, or,
// with a payload store, the Ref of a transcript chunk holding them and
// their count. Its JSON is the message array in the first case, as the
// activity returned before payload stores (so recorded histories decode),
// and an object in the second.
type sessionLoad struct {
	Messages []runlet.Message
	Ref      *Ref
	Len      int
}

func (l sessionLoad) MarshalJSON() ([]byte, error) {
	if l.Ref == nil {
		return json.Marshal(l.Messages)
	}
	return json.Marshal(struct {
		Ref *Ref `json:"ref"`
		Len int  `json:"len"`
	}{l.Ref, l.Len})
}

func (l *sessionLoad) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '{' {
		var v struct {
			Ref *Ref `json:"ref"`
			Len int  `json:"len"`
		}
		err := json.Unmarshal(b, &v)
		l.Ref, l.Len = v.Ref, v.Len
		return err
	}
	return json.Unmarshal(b, &l.Messages)
}

func (d *Durable) loadSession(ctx context.Context, sessionID string) (sessionLoad, error) {
	s, err := d.sessions(sessionID)
	if err != nil {
		return sessionLoad{}, err
	}
	msgs, err := s.LoadSession(ctx, sessionID)
	if err != nil {
		return sessionLoad{}, fmt.Errorf("runlet/temporal: loading session %q: %w", sessionID, err)
	}
	if d.cfg.Payloads == nil || len(msgs) == 0 {
		return sessionLoad{Messages: msgs}, nil
	}
	ref, _, err := d.putTranscript(ctx, nil, cached{}, msgs, nil)
	if err != nil {
		return sessionLoad{}, err
	}
	return sessionLoad{Ref: &ref, Len: len(msgs)}, nil
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
	if len(in.Refs) > 0 {
		if in.Messages, err = resolve(ctx, d.cfg.Payloads, in.Messages, in.Refs); err != nil {
			return err
		}
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
