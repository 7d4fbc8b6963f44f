package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/internal/storerow"
)

// appendScript appends a batch to a session if it still holds exactly
// `after` messages. KEYS: messages list, state hash. ARGV: after, session
// TTL in ms (0: none), then the messages. It returns {1, new length} or, on
// a length mismatch, {0, current length} and writes nothing.
//
// The batch goes in with RPUSH in chunks (Lua's unpack has a stack limit),
// all inside this one script: Redis runs it without interleaving other
// commands, does not stop it for maxmemory once it has written (the check is
// before its first write), and logs it to the AOF and replicas as one
// MULTI/EXEC block — so a batch is stored whole or not at all.
var appendScript = goredis.NewScript(`
local n = redis.call('LLEN', KEYS[1])
if n ~= tonumber(ARGV[1]) then
	return {0, n}
end
local last = #ARGV
if last < 3 then
	return {1, n}
end
for i = 3, last, 1000 do
	n = redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, last)))
end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
	redis.call('PEXPIRE', KEYS[1], ttl)
	redis.call('PEXPIRE', KEYS[2], ttl)
end
return {1, n}
`)

// loadScript returns a session's messages: {0, {messages...}}. It checks
// them against the Store's limits as it collects them, page by page, so
// that a session over a limit is never sent: ARGV are the most messages,
// the largest message and the most bytes in all. Over a limit it returns
// {1, count} (messages), {2, index, size} (one message) or {3, bytes so
// far} (the session), and none of the messages.
var loadScript = goredis.NewScript(`
local n = redis.call('LLEN', KEYS[1])
if n > tonumber(ARGV[1]) then
	return {1, n}
end
local maxRow, maxBytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local out, total = {}, 0
for i = 0, n - 1, 256 do
	local page = redis.call('LRANGE', KEYS[1], i, i + 255)
	for j = 1, #page do
		local v = page[j]
		if #v > maxRow then
			return {2, i + j - 1, #v}
		end
		total = total + #v
		if total > maxBytes then
			return {3, total}
		end
		out[#out + 1] = v
	end
end
return {0, out}
`)

// LoadSession implements [runlet.SessionStore].
func (s *Store) LoadSession(ctx context.Context, sessionID string) ([]runlet.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redis: load session: %w", err)
	}
	lim := s.cfg.limits
	res, err := loadScript.Run(ctx, s.client, []string{s.messagesKey(sessionID)},
		lim.SessionMessages, lim.RowBytes, lim.SessionBytes).Slice()
	if err != nil {
		return nil, fmt.Errorf("redis: load session: %w", invalid(fmt.Sprintf("session %q", sessionID), err))
	}
	if len(res) < 2 {
		return nil, fmt.Errorf("redis: load session %q: unexpected reply %v", sessionID, res)
	}
	switch code, _ := res[0].(int64); code {
	case 0:
	case 1:
		n, _ := res[1].(int64)
		return nil, lim.Session(sessionID, n, 0)
	case 2:
		var size int64
		if len(res) > 2 {
			size, _ = res[2].(int64)
		}
		idx, _ := res[1].(int64)
		return nil, lim.Row(storerow.Message(sessionID, int(idx)), size)
	case 3:
		total, _ := res[1].(int64)
		return nil, lim.Session(sessionID, 0, total)
	default:
		return nil, fmt.Errorf("redis: load session %q: unexpected reply %v", sessionID, res)
	}
	raw, _ := res[1].([]any)
	if len(raw) == 0 {
		return nil, nil
	}
	msgs := make([]runlet.Message, len(raw))
	for i, v := range raw {
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("redis: load session %q: message %d: unexpected reply %T", sessionID, i, v)
		}
		if err := storerow.DecodeMessage(sessionID, i, []byte(str), &msgs[i]); err != nil {
			return nil, fmt.Errorf("redis: load session: %w", err)
		}
	}
	return msgs, nil
}

// AppendSession implements [runlet.SessionStore]: the length check and the
// push are one script, so the batch is stored whole or not at all. With
// [WithSessionTTL], it sets the session's expiry again.
func (s *Store) AppendSession(ctx context.Context, sessionID string, after int, msgs []runlet.Message) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redis: append session: %w", err)
	}
	lim := s.cfg.limits
	if after >= 0 && int64(after)+int64(len(msgs)) > lim.SessionMessages && len(msgs) > 0 {
		return lim.Session(sessionID, int64(after)+int64(len(msgs)), 0)
	}
	args := make([]any, 2, 2+len(msgs))
	args[0], args[1] = after, millis(s.cfg.sessionTTL)
	for i := range msgs {
		b, err := json.Marshal(&msgs[i])
		if err != nil {
			return fmt.Errorf("redis: append session %q: encode message %d: %w", sessionID, i, err)
		}
		if err := lim.Row(storerow.Message(sessionID, max(after, 0)+i), int64(len(b))); err != nil {
			return err
		}
		args = append(args, b)
	}
	res, err := appendScript.Run(ctx, s.client, []string{s.messagesKey(sessionID), s.stateKey(sessionID)}, args...).Int64Slice()
	if err != nil {
		return fmt.Errorf("redis: append session: %w", err)
	}
	if len(res) != 2 {
		return fmt.Errorf("redis: append session %q: unexpected reply %v", sessionID, res)
	}
	if res[0] != 1 {
		return conflict(sessionID, after, res[1])
	}
	return nil
}

func conflict(sessionID string, want int, have int64) error {
	return fmt.Errorf("redis: session %q changed concurrently (expected %d messages, found %d): %w",
		sessionID, want, have, runlet.ErrConflict)
}

// getStateScript returns a state value, or nil for a missing key, or the
// value's size (an integer) when it is over ARGV[2] bytes, checked with
// HSTRLEN before the value is read. KEYS: state hash. ARGV: key, limit.
var getStateScript = goredis.NewScript(`
local n = redis.call('HSTRLEN', KEYS[1], ARGV[1])
if n > tonumber(ARGV[2]) then
	return n
end
return redis.call('HGET', KEYS[1], ARGV[1])
`)

// setStateScript sets (ARGV[3] = "1") or deletes a state value and, with a
// session TTL (ARGV[2] ms), sets the session's expiry again. KEYS:
// state hash, messages list. ARGV: key, TTL, set, value.
var setStateScript = goredis.NewScript(`
if ARGV[3] == '1' then
	redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
else
	redis.call('HDEL', KEYS[1], ARGV[1])
end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
	redis.call('PEXPIRE', KEYS[1], ttl)
	redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
`)

// GetState implements [runlet.StateStore].
func (s *Store) GetState(ctx context.Context, sessionID, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redis: get state: %w", err)
	}
	lim := s.cfg.limits
	v, err := getStateScript.Run(ctx, s.client, []string{s.stateKey(sessionID)}, key, lim.RowBytes).Result()
	if errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("redis: %s: %w", storerow.State(sessionID, key), runlet.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("redis: get state: %w", invalid(storerow.State(sessionID, key), err))
	}
	switch v := v.(type) {
	case string:
		return []byte(v), nil
	case int64:
		return nil, lim.Row(storerow.State(sessionID, key), v)
	}
	return nil, fmt.Errorf("redis: get state: unexpected reply %T", v)
}

// SetState implements [runlet.StateStore]. With [WithSessionTTL], it sets
// the session's expiry again.
func (s *Store) SetState(ctx context.Context, sessionID, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redis: set state: %w", err)
	}
	lim := s.cfg.limits
	if err := lim.Row(storerow.State(sessionID, key), int64(len(value))); err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	err := setStateScript.Run(ctx, s.client, []string{s.stateKey(sessionID), s.messagesKey(sessionID)},
		key, millis(s.cfg.sessionTTL), "1", value).Err()
	if err != nil {
		return fmt.Errorf("redis: set state: %w", err)
	}
	return nil
}

// DeleteState implements [runlet.StateStore]. Deleting a missing key is not
// an error. With [WithSessionTTL], it sets the session's expiry again.
func (s *Store) DeleteState(ctx context.Context, sessionID, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redis: delete state: %w", err)
	}
	err := setStateScript.Run(ctx, s.client, []string{s.stateKey(sessionID), s.messagesKey(sessionID)},
		key, millis(s.cfg.sessionTTL), "0").Err()
	if err != nil {
		return fmt.Errorf("redis: delete state: %w", err)
	}
	return nil
}
