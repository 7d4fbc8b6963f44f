package storetest

import (
	"context"
	"sync/atomic"

	"github.com/runlet/runlet"
)

// Alternate returns a Store that sends each call to the next of stores in
// turn. The stores must share their data: several instances of one store
// over the same database, as several application instances would have. Run
// on it, the suite checks that what one instance writes the others see,
// and that the atomicity guarantees (appends, claims) hold across
// instances, not only within one.
func Alternate(stores ...runlet.Store) runlet.Store {
	if len(stores) == 0 {
		panic("storetest: Alternate needs at least one store")
	}
	return &alternate{stores: stores}
}

type alternate struct {
	stores []runlet.Store
	next   atomic.Uint64
}

func (a *alternate) pick() runlet.Store {
	return a.stores[(a.next.Add(1)-1)%uint64(len(a.stores))]
}

func (a *alternate) LoadSession(ctx context.Context, sessionID string) ([]runlet.Message, error) {
	return a.pick().LoadSession(ctx, sessionID)
}

func (a *alternate) AppendSession(ctx context.Context, sessionID string, after int, msgs []runlet.Message) error {
	return a.pick().AppendSession(ctx, sessionID, after, msgs)
}

func (a *alternate) GetState(ctx context.Context, sessionID, key string) ([]byte, error) {
	return a.pick().GetState(ctx, sessionID, key)
}

func (a *alternate) SetState(ctx context.Context, sessionID, key string, value []byte) error {
	return a.pick().SetState(ctx, sessionID, key, value)
}

func (a *alternate) DeleteState(ctx context.Context, sessionID, key string) error {
	return a.pick().DeleteState(ctx, sessionID, key)
}

func (a *alternate) SaveCheckpoint(ctx context.Context, cp *runlet.Checkpoint) error {
	return a.pick().SaveCheckpoint(ctx, cp)
}

func (a *alternate) LoadCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	return a.pick().LoadCheckpoint(ctx, runID)
}

func (a *alternate) ClaimCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	return a.pick().ClaimCheckpoint(ctx, runID)
}

func (a *alternate) DeleteCheckpoint(ctx context.Context, runID string) error {
	return a.pick().DeleteCheckpoint(ctx, runID)
}
