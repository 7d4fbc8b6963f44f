package uistream

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/runlet/runlet"
)

// aguiState shares some keys of the session's key-value state (runlet's
// StateStore, which tools reach with runlet.GetState and SetState) with
// the page as AG-UI's state: an object with one member per key present.
// The page's state writes those keys before the run starts; the run's
// changes reach the page as STATE_DELTA patches after each tool call and
// before the run ends. Values are JSON; bytes that are not are sent as a
// string.
type aguiState struct {
	ctx     context.Context
	store   runlet.StateStore
	keys    []string
	session string
	last    map[string]json.RawMessage // what the page was last sent; absent keys are missing
}

func newAGUIState(ctx context.Context, store runlet.StateStore, keys []string) *aguiState {
	if store == nil || len(keys) == 0 {
		return nil
	}
	return &aguiState{ctx: ctx, store: store, keys: keys}
}

// start writes the page's values of the keys (a null deletes one) to the
// session's state and sends the STATE_SNAPSHOT. Without a session there is
// no state, and no state event.
func (st *aguiState) start(w *frameWriter, ev runlet.Event, session string, page json.RawMessage) error {
	if session == "" {
		return nil
	}
	st.session = session
	var members map[string]json.RawMessage
	if len(page) > 0 && json.Unmarshal(page, &members) == nil {
		for _, k := range st.keys {
			v, ok := members[k]
			switch {
			case !ok:
			case string(v) == "null":
				_ = st.store.DeleteState(st.ctx, session, k)
			default:
				_ = st.store.SetState(st.ctx, session, k, v)
			}
		}
	}
	return st.snapshot(w, ev)
}

// snapshot sends the keys' current values as a STATE_SNAPSHOT.
func (st *aguiState) snapshot(w *frameWriter, ev runlet.Event) error {
	if st.session == "" {
		return nil
	}
	st.last = st.read()
	snap := st.last
	if snap == nil {
		snap = map[string]json.RawMessage{}
	}
	return w.data(aguiStateSnapshot{aguiBase: base("STATE_SNAPSHOT", ev), Snapshot: snap})
}

// read returns the keys' current values. A key the store cannot read is
// left out, as a missing one is: state is best effort and never fails the
// run.
func (st *aguiState) read() map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, k := range st.keys {
		b, err := st.store.GetState(st.ctx, st.session, k)
		if err != nil {
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage, len(st.keys))
		}
		out[k] = jsonValue(b)
	}
	return out
}

// jsonValue is b when it is JSON, else b as a JSON string.
func jsonValue(b []byte) json.RawMessage {
	if json.Valid(b) {
		return json.RawMessage(bytes.Clone(b))
	}
	s, _ := json.Marshal(string(b))
	return s
}

// check sends a STATE_DELTA with what changed since the page was last
// sent the state.
func (st *aguiState) check(w *frameWriter, ev runlet.Event) error {
	if st.session == "" {
		return nil
	}
	now := st.read()
	var ops []aguiPatchOp
	for _, k := range st.keys {
		old, had := st.last[k]
		cur, has := now[k]
		path := "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
		switch {
		case has && !had:
			ops = append(ops, aguiPatchOp{Op: "add", Path: path, Value: cur})
		case had && !has:
			ops = append(ops, aguiPatchOp{Op: "remove", Path: path})
		case has && !bytes.Equal(old, cur):
			ops = append(ops, aguiPatchOp{Op: "replace", Path: path, Value: cur})
		}
	}
	st.last = now
	if len(ops) == 0 {
		return nil
	}
	return w.data(aguiStateDelta{aguiBase: base("STATE_DELTA", ev), Delta: ops})
}
