package runlet

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// SessionStore keeps conversation history per session.
type SessionStore interface {
	// LoadSession returns the session's messages in order. An unknown
	// session is empty, not an error.
	LoadSession(ctx context.Context, sessionID string) ([]Message, error)
	// AppendSession appends msgs atomically, all or nothing, provided the
	// session holds exactly `after` messages; otherwise it appends nothing
	// and returns an error wrapping ErrConflict. This optimistic check is
	// what keeps two writers from interleaving half turns.
	AppendSession(ctx context.Context, sessionID string, after int, msgs []Message) error
}

// StateStore keeps key-value state scoped to a session. Tools, hooks and
// preparers reach the current session's state with GetState, SetState and
// DeleteState.
type StateStore interface {
	// GetState returns the value, or an error wrapping ErrNotFound.
	GetState(ctx context.Context, sessionID, key string) ([]byte, error)
	SetState(ctx context.Context, sessionID, key string, value []byte) error
	DeleteState(ctx context.Context, sessionID, key string) error
}

// CheckpointStore keeps the checkpoints of interrupted runs.
type CheckpointStore interface {
	SaveCheckpoint(ctx context.Context, cp *Checkpoint) error
	// LoadCheckpoint returns the checkpoint, or an error wrapping ErrNotFound.
	LoadCheckpoint(ctx context.Context, runID string) (*Checkpoint, error)
	// ClaimCheckpoint loads and deletes the checkpoint in one atomic step, so
	// exactly one of several concurrent resumes gets it; the others get an
	// error wrapping ErrNotFound.
	ClaimCheckpoint(ctx context.Context, runID string) (*Checkpoint, error)
	DeleteCheckpoint(ctx context.Context, runID string) error
}

// Store is a SessionStore, StateStore and CheckpointStore in one, like
// NewMemoryStore's and the stores in store/.
type Store interface {
	SessionStore
	StateStore
	CheckpointStore
}

// Checkpoint is the saved state of an interrupted run: enough to resume it
// in another process. It round-trips through JSON.
//
// Resume acts only on a checkpoint consistent with the turn it interrupted
// (see Runtime.Resume): Messages end with the assistant message whose tool
// calls were interrupted, with distinct non-empty IDs; each of those calls
// is exactly one of Pending (same ID and tool name), Results (by CallID)
// or Nested (by ID, for a call of an agent's tool made by AsTool, holding
// a checkpoint of that agent, or of one it hands off to, consistent in
// the same way and naming no session, at most 32 levels deep); at least
// one call waits for a
// decision; RunID is the resumed run's; Agent, when set, is the resumed
// agent or one it hands off to; counts are not negative and Committed and
// ViewAt index Messages. Such a checkpoint can still say anything the
// model or a tool could have said (its messages, arguments and results),
// and its Settings, Options and Limits apply to the resumed run: only
// WithCheckpointKey detects a change to those.
type Checkpoint struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Turn      int    `json:"turn"`
	// History holds the messages before this run when they did not come from
	// the session store (explicit history); with a session it is empty and
	// HistoryLen records how many session messages the run started after.
	History    []Message `json:"history,omitempty"`
	HistoryLen int       `json:"history_len"`
	// Messages are what the run added, ending with the assistant message
	// whose tool calls wait for a decision; the first Committed of them are
	// already in the session store.
	Messages []Message `json:"messages"`
	// After a handoff with a filter, View is what the agent sees in place
	// of the conversation before Messages[ViewAt:] (see Handoff.Filter).
	View      []Message `json:"view,omitempty"`
	ViewAt    int       `json:"view_at,omitempty"`
	Filtered  bool      `json:"filtered,omitempty"`
	Committed int       `json:"committed,omitempty"`
	// Results are the finished results of that turn's calls that needed no
	// decision; Pending are the calls waiting for one.
	Results []ToolResultPart `json:"results,omitempty"`
	Pending []ToolCallPart   `json:"pending"`
	// Nested holds, by the ID of the call that ran it, the checkpoint of
	// each agent called as a tool in that turn that was itself interrupted;
	// the calls waiting for a decision are its Pending and its own Nested
	// ones. Such a checkpoint's Usage is its agent's own.
	Nested map[string]*Checkpoint `json:"nested,omitempty"`
	// Usage and ToolCalls count what the run used before the interruption
	// (Usage.Requests its model calls), so limits go on counting from there;
	// UsageByPurpose splits Usage as Result.UsageByPurpose does.
	Usage          Usage            `json:"usage"`
	UsageByPurpose map[string]Usage `json:"usage_by_purpose,omitempty"`
	UsageByAgent   map[string]Usage `json:"usage_by_agent,omitempty"`
	ToolCalls      int              `json:"tool_calls,omitempty"`
	// UsageByModel, Cost, CostByModel and CostByAgent are the Result's so
	// far, so the resumed run goes on adding to them. A checkpoint written
	// before they were recorded resumes with the calls before it unpriced
	// (and, without CostByAgent, their cost counted to Agent).
	UsageByModel map[string]Usage `json:"usage_by_model,omitempty"`
	Cost         Cost             `json:"cost,omitzero"`
	CostByModel  map[string]Cost  `json:"cost_by_model,omitempty"`
	CostByAgent  map[string]Cost  `json:"cost_by_agent,omitempty"`
	// Settings and Options are the run's own request settings and options
	// (WithSettings, WithOptions), laid over the agent's again on resume.
	Settings Settings       `json:"settings,omitzero"`
	Options  map[string]any `json:"options,omitempty"`
	// Limits and MaxTurns are the limits the run had. A checkpoint written
	// before they were recorded (nil Limits, zero MaxTurns, zero ToolCalls)
	// resumes with the resuming Runtime's limits, the agent's or Runtime's
	// max turns, and tool calls counted from zero.
	Limits    *UsageLimits `json:"limits,omitempty"`
	MaxTurns  int          `json:"max_turns,omitempty"`
	CreatedAt time.Time    `json:"created_at"`
	// MAC authenticates the checkpoint when the Runtime that saved it has
	// a key (see WithCheckpointKey): the hex HMAC-SHA256 of the
	// checkpoint's JSON without MAC. A store keeps it as any other field.
	MAC string `json:"mac,omitempty"`
}

// memoryStore is NewMemoryStore's Store.
type memoryStore struct {
	mu          sync.Mutex
	sessions    map[string][]Message
	state       map[string]map[string][]byte
	checkpoints map[string][]byte // JSON, so a checkpoint is deep-copied
}

// NewMemoryStore returns an empty in-memory Store, safe for concurrent use,
// for one process and tests. Values are copied in and out, so callers
// cannot change stored state by accident.
func NewMemoryStore() Store {
	return &memoryStore{
		sessions:    map[string][]Message{},
		state:       map[string]map[string][]byte{},
		checkpoints: map[string][]byte{},
	}
}

func (s *memoryStore) LoadSession(ctx context.Context, sessionID string) ([]Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneMessages(s.sessions[sessionID]), nil
}

func (s *memoryStore) AppendSession(ctx context.Context, sessionID string, after int, msgs []Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.sessions[sessionID]
	if len(cur) != after {
		return &conflictError{sessionID: sessionID, want: after, have: len(cur)}
	}
	// Readers get deep copies, so appending in place is safe and keeps
	// appends O(batch) instead of copying the whole session each time.
	s.sessions[sessionID] = append(cur, cloneMessages(msgs)...)
	return nil
}

// cloneMessages deep-copies msgs: the part lists and the byte slices inside
// parts, which a caller could otherwise change under the store.
func cloneMessages(msgs []Message) []Message {
	if msgs == nil {
		return nil
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Role: m.Role, Parts: slices.Clone(m.Parts)}
		for j, p := range out[i].Parts {
			out[i].Parts[j] = clonePart(p)
		}
	}
	return out
}

// clonePart returns p with its own copies of the slices inside it.
func clonePart(p Part) Part {
	switch p := p.(type) {
	case ToolCallPart:
		return p.clone()
	case ImagePart:
		p.Data = slices.Clone(p.Data)
		return p
	case FilePart:
		p.Data = slices.Clone(p.Data)
		return p
	case AudioPart:
		p.Data = slices.Clone(p.Data)
		return p
	case ToolResultPart:
		return p.clone()
	case TextPart:
		p.Citations = cloneCitations(p.Citations)
		return p
	case HostedToolPart:
		return p.clone()
	}
	return p
}

func (s *memoryStore) GetState(ctx context.Context, sessionID, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.state[sessionID][key]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(v), nil
}

func (s *memoryStore) SetState(ctx context.Context, sessionID, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.state[sessionID]
	if m == nil {
		m = map[string][]byte{}
		s.state[sessionID] = m
	}
	m[key] = slices.Clone(value)
	return nil
}

func (s *memoryStore) DeleteState(ctx context.Context, sessionID, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.state[sessionID], key)
	return nil
}

func (s *memoryStore) SaveCheckpoint(ctx context.Context, cp *Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkpoints[cp.RunID] = data
	return nil
}

func (s *memoryStore) LoadCheckpoint(ctx context.Context, runID string) (*Checkpoint, error) {
	return s.loadCheckpoint(ctx, runID, false)
}

func (s *memoryStore) ClaimCheckpoint(ctx context.Context, runID string) (*Checkpoint, error) {
	return s.loadCheckpoint(ctx, runID, true)
}

func (s *memoryStore) loadCheckpoint(ctx context.Context, runID string, claim bool) (*Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.checkpoints[runID]
	if !ok {
		return nil, ErrNotFound
	}
	var cp Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		// left in place, as the durable stores do
		return nil, &CheckpointError{RunID: runID, Reason: "it does not decode", Err: err}
	}
	if claim {
		delete(s.checkpoints, runID)
	}
	return &cp, nil
}

func (s *memoryStore) DeleteCheckpoint(ctx context.Context, runID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.checkpoints, runID)
	return nil
}

type conflictError struct {
	sessionID  string
	want, have int
}

func (e *conflictError) Error() string {
	return fmt.Sprintf("runlet: session %q changed concurrently (expected %d messages, found %d)", e.sessionID, e.want, e.have)
}

func (e *conflictError) Unwrap() error { return ErrConflict }
