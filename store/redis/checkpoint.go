package redis

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/internal/storerow"
)

// getScript returns a string value, or nil for a missing key, or the
// value's size (an integer) when it is over ARGV[1] bytes, checked with
// STRLEN before the value is read. KEYS: the key.
var getScript = goredis.NewScript(`
local n = redis.call('STRLEN', KEYS[1])
if n > tonumber(ARGV[1]) then
	return n
end
return redis.call('GET', KEYS[1])
`)

// claimScript deletes a checkpoint if it is still the one with SHA-1
// ARGV[1]: it returns 1 when it did, 0 when the checkpoint is gone and -1
// when it was replaced since it was read. KEYS: the checkpoint's key.
var claimScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
	return 0
end
if redis.sha1hex(v) ~= ARGV[1] then
	return -1
end
redis.call('DEL', KEYS[1])
return 1
`)

// SaveCheckpoint implements [runlet.CheckpointStore]. It replaces an earlier
// checkpoint of the same run; with [WithCheckpointTTL] the checkpoint
// expires that long after this save.
func (s *Store) SaveCheckpoint(ctx context.Context, cp *runlet.Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redis: save checkpoint: %w", err)
	}
	if cp == nil || cp.RunID == "" {
		return errors.New("redis: save checkpoint: checkpoint without a run ID")
	}
	data, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("redis: save checkpoint %q: encode: %w", cp.RunID, err)
	}
	if err := s.cfg.limits.Row(storerow.Checkpoint(cp.RunID), int64(len(data))); err != nil {
		return err
	}
	// Without a TTL, SET also clears one an earlier save may have left.
	if err := s.client.Set(ctx, s.checkpointKey(cp.RunID), data, s.cfg.checkpointTTL).Err(); err != nil {
		return fmt.Errorf("redis: save checkpoint: %w", err)
	}
	return nil
}

// LoadCheckpoint implements [runlet.CheckpointStore].
func (s *Store) LoadCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redis: load checkpoint: %w", err)
	}
	data, err := s.getCheckpoint(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("redis: load checkpoint: %w", err)
	}
	return decodeCheckpoint(runID, data)
}

// ClaimCheckpoint implements [runlet.CheckpointStore]. It reads the
// checkpoint, decodes it, and deletes it only if it is still the one it
// read, in one script; so of several concurrent claims, on any instances,
// exactly one gets it. A checkpoint that does not decode, or is over the
// size limit, is left in place.
func (s *Store) ClaimCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redis: claim checkpoint: %w", err)
	}
	// A save between the read and the delete replaces the checkpoint; the
	// claim then starts over with the new one. Saves of one run come from
	// the run itself, so a few rounds are plenty.
	for range 8 {
		data, err := s.getCheckpoint(ctx, runID)
		if err != nil {
			return nil, fmt.Errorf("redis: claim checkpoint: %w", err)
		}
		cp, err := decodeCheckpoint(runID, data)
		if err != nil {
			return nil, err
		}
		sum := sha1.Sum(data)
		n, err := claimScript.Run(ctx, s.client, []string{s.checkpointKey(runID)}, hex.EncodeToString(sum[:])).Int64()
		if err != nil {
			return nil, fmt.Errorf("redis: claim checkpoint: %w", err)
		}
		switch n {
		case 1:
			return cp, nil
		case 0:
			return nil, fmt.Errorf("redis: claim checkpoint: %w", notFound(runID))
		}
	}
	return nil, fmt.Errorf("redis: claim checkpoint of run %q: it kept changing while being claimed: %w", runID, runlet.ErrConflict)
}

// getCheckpoint returns a checkpoint's JSON, checking its size before
// reading it.
func (s *Store) getCheckpoint(ctx context.Context, runID string) ([]byte, error) {
	lim := s.cfg.limits
	v, err := getScript.Run(ctx, s.client, []string{s.checkpointKey(runID)}, lim.RowBytes).Result()
	if errors.Is(err, goredis.Nil) {
		return nil, notFound(runID)
	}
	if err != nil {
		return nil, invalid(storerow.Checkpoint(runID), err)
	}
	switch v := v.(type) {
	case string:
		return []byte(v), nil
	case int64:
		return nil, lim.Row(storerow.Checkpoint(runID), v)
	}
	return nil, fmt.Errorf("unexpected reply %T", v)
}

// DeleteCheckpoint implements [runlet.CheckpointStore]. Deleting a missing
// checkpoint is not an error.
func (s *Store) DeleteCheckpoint(ctx context.Context, runID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redis: delete checkpoint: %w", err)
	}
	if err := s.client.Del(ctx, s.checkpointKey(runID)).Err(); err != nil {
		return fmt.Errorf("redis: delete checkpoint: %w", err)
	}
	return nil
}

func notFound(runID string) error {
	return fmt.Errorf("%s: %w", storerow.Checkpoint(runID), runlet.ErrNotFound)
}

func decodeCheckpoint(runID string, data []byte) (*runlet.Checkpoint, error) {
	cp := new(runlet.Checkpoint)
	if err := json.Unmarshal(data, cp); err != nil {
		return nil, fmt.Errorf("redis: %w", &runlet.CheckpointError{RunID: runID, Reason: "it does not decode", Err: err})
	}
	return cp, nil
}
