package temporal

import (
	"context"
	"slices"

	"github.com/runlet/runlet"
)

// Session key-value state in durable runs (runlet.GetState, SetState,
// DeleteState): the activities of a run with a SessionID reach the
// session's state in Config.State, as a run of a Runtime with that store
// would. See the package doc, "Session state".

// stateStore returns the store of the sessions' key-value state:
// Config.State, else Config.Sessions when it keeps state too.
func (d *Durable) stateStore() runlet.StateStore {
	if d.cfg.State != nil {
		return d.cfg.State
	}
	s, _ := d.cfg.Sessions.(runlet.StateStore)
	return s
}

// turnStore is the store of the model activity's one-turn run: the
// session it "loads" is the workflow's transcript, what it appends is
// dropped (the workflow appends completed turns itself), its checkpoints
// are thrown away with it, and its state is the sessions' state. So the
// preparers and model-call hooks see the session's state, and the run's
// RunInfo names the session, as in a run of a Runtime.
type turnStore struct {
	msgs  []runlet.Message
	state runlet.StateStore
	runlet.CheckpointStore
}

func newTurnStore(msgs []runlet.Message, state runlet.StateStore) *turnStore {
	return &turnStore{msgs: slices.Clip(msgs), state: state, CheckpointStore: runlet.NewMemoryStore()}
}

func (s *turnStore) LoadSession(context.Context, string) ([]runlet.Message, error) {
	return s.msgs, nil
}

func (s *turnStore) AppendSession(context.Context, string, int, []runlet.Message) error {
	return nil
}

func (s *turnStore) GetState(ctx context.Context, sessionID, key string) ([]byte, error) {
	return s.state.GetState(ctx, sessionID, key)
}

func (s *turnStore) SetState(ctx context.Context, sessionID, key string, value []byte) error {
	return s.state.SetState(ctx, sessionID, key, value)
}

func (s *turnStore) DeleteState(ctx context.Context, sessionID, key string) error {
	return s.state.DeleteState(ctx, sessionID, key)
}
