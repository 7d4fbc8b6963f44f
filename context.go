package runlet

import (
	"context"
	"errors"
	"sync"
)

// ErrNoSession is returned by the state functions outside a run with a
// session (see WithSession), and wrapped by a run WithSession on a Runtime
// without a session store.
var ErrNoSession = errors.New("runlet: no session")

type runInfoKey struct{}

// runCtx is a run's context: its cancellable context carrying its RunInfo,
// in one value (context.WithValue would be one more allocation per run).
type runCtx struct {
	context.Context
	info *RunInfo
}

func (c *runCtx) Value(key any) any {
	if _, ok := key.(runInfoKey); ok {
		return c.info
	}
	return c.Context.Value(key)
}

// RunInfo describes the run a context belongs to. Tools, hooks and
// preparers get it with RunInfoFrom.
type RunInfo struct {
	RunID     string
	SessionID string
	Agent     string
	// Turn is the current model call number, from 1.
	Turn int

	// prevInputTokens is the input token count the provider reported for
	// the previous model call of the run (0 before the first), and
	// prevMessages the number of history messages the previous request was
	// built from, of which the first prevKeptFrom were dropped by
	// preparers. TokenBudget anchors its estimate on these.
	prevInputTokens, prevMessages, prevKeptFrom int

	state StateStore
	// mu guards the fields the run changes as it goes (Turn, Agent, the
	// prev* anchors, notes, run) against RunInfoFrom on other goroutines:
	// a tool abandoned after its timeout may still read while the run
	// moves on. The run's own goroutine reads without it.
	mu    *sync.Mutex
	notes *prepNotes
	run   *run // set while preparers run, for CallModel
}

// RunInfoFrom returns the run information carried by ctx.
func RunInfoFrom(ctx context.Context) (RunInfo, bool) {
	ri, ok := ctx.Value(runInfoKey{}).(*RunInfo)
	if !ok {
		return RunInfo{}, false
	}
	if ri.mu == nil {
		return *ri, true
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	return *ri, true
}

// ContextWithRunInfo returns a context carrying info, for a program that
// runs a run's tools or hooks outside a Runtime (runlet/temporal runs each
// in an activity of its own): in it RunInfoFrom returns info, and
// GetState, SetState and DeleteState reach the key-value state of
// info.SessionID in state (ErrNoSession when either is missing), as they
// would in a run.
func ContextWithRunInfo(ctx context.Context, info RunInfo, state StateStore) context.Context {
	info.state, info.mu, info.notes, info.run = state, nil, nil, nil
	return context.WithValue(ctx, runInfoKey{}, &info)
}

func runInfo(ctx context.Context) *RunInfo {
	ri, _ := ctx.Value(runInfoKey{}).(*RunInfo)
	return ri
}

func sessionState(ctx context.Context) (*RunInfo, error) {
	ri := runInfo(ctx)
	if ri == nil || ri.SessionID == "" || ri.state == nil {
		return nil, ErrNoSession
	}
	return ri, nil
}

// GetState reads a value from the current session's key-value state. A
// missing key is an error wrapping ErrNotFound.
func GetState(ctx context.Context, key string) ([]byte, error) {
	ri, err := sessionState(ctx)
	if err != nil {
		return nil, err
	}
	return ri.state.GetState(ctx, ri.SessionID, key)
}

// SetState writes a value to the current session's key-value state.
func SetState(ctx context.Context, key string, value []byte) error {
	ri, err := sessionState(ctx)
	if err != nil {
		return err
	}
	return ri.state.SetState(ctx, ri.SessionID, key, value)
}

// DeleteState removes a key from the current session's key-value state.
func DeleteState(ctx context.Context, key string) error {
	ri, err := sessionState(ctx)
	if err != nil {
		return err
	}
	return ri.state.DeleteState(ctx, ri.SessionID, key)
}

// prepNotes collects what preparers report for the context.prepared event.
type prepNotes struct {
	notes  []string
	tokens int
}

// NotePrepared lets a Preparer say what it changed (and, if tokens > 0, its
// token estimate); the notes appear in the context.prepared event.
func NotePrepared(ctx context.Context, note string, tokens int) {
	ri := runInfo(ctx)
	if ri == nil || ri.notes == nil {
		return
	}
	if note != "" {
		ri.notes.notes = append(ri.notes.notes, note)
	}
	if tokens > 0 {
		ri.notes.tokens = tokens
	}
}
