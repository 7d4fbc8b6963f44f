package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/temporal"
)

// With a payload store, a run's transcript (every message a model call
// sees) lives in the store as a chain of chunks, one per model call, each
// holding the messages that call added to the one before and naming it by
// Ref. The model activity gets the Ref of the last chunk and the messages
// after it, stores them as the next chunk and returns its Ref: what each
// activity carries in the workflow's history is what is new, not the whole
// conversation. A worker keeps the transcripts it resolved last in memory
// (transcriptCache), so a run that stays on one worker reads one chunk per
// turn at most; a worker that takes a run over walks its chain once.

// chunk is one link of a stored transcript: the messages after Prev (with
// their refs) and how many messages the transcript holds up to its end.
type chunk struct {
	Prev     *Ref             `json:"prev,omitempty"`
	Len      int              `json:"len"`
	Messages []runlet.Message `json:"messages"`
	Refs     []PartRef        `json:"refs,omitempty"`
}

// maxChain bounds the chunks one transcript may chain, against a store
// whose chunks loop.
const maxChain = 1 << 20

// putTranscript stores msgs (with refs) as the chunk after prev, whose
// transcript resolved to base, and returns the new chunk's Ref and the
// whole transcript, resolved.
func (d *Durable) putTranscript(ctx context.Context, prev *Ref, base cached, msgs []runlet.Message, refs []PartRef) (Ref, []runlet.Message, error) {
	full, err := resolve(ctx, d.cfg.Payloads, msgs, refs)
	if err != nil {
		return Ref{}, nil, err
	}
	all := append(slices.Clip(base.msgs), full...)
	data, err := json.Marshal(chunk{Prev: prev, Len: len(all), Messages: msgs, Refs: refs})
	if err != nil {
		return Ref{}, nil, temporal.NewNonRetryableApplicationError("runlet/temporal: storing the transcript: "+err.Error(), ErrTypeRun, err)
	}
	ref, err := putPayload(ctx, d.cfg.Payloads, data)
	if err != nil {
		return Ref{}, nil, err
	}
	d.transcripts.put(ref, prev, cached{msgs: all, bytes: base.bytes + len(data) + refBytes(refs)})
	return ref, all, nil
}

// loadTranscript returns the whole transcript ending with the chunk ref
// names, resolved: from the cache, or by walking the chain back to a
// cached chunk or to its start.
func (d *Durable) loadTranscript(ctx context.Context, ref Ref) (cached, error) {
	if e, ok := d.transcripts.get(ref); ok {
		return e, nil
	}
	var chain []chunk
	var base cached
	walked := 0 // bytes of the chunks read
	for at := &ref; at != nil; {
		if e, ok := d.transcripts.get(*at); ok {
			base = e
			break
		}
		if len(chain) >= maxChain {
			return cached{}, temporal.NewNonRetryableApplicationError("runlet/temporal: transcript chain too long", ErrTypePayload, nil)
		}
		data, err := getPayload(ctx, d.cfg.Payloads, *at)
		if err != nil {
			return cached{}, err
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return cached{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("runlet/temporal: payload %s is not a transcript chunk", at.Key()), ErrTypePayload, err)
		}
		chain = append(chain, c)
		walked += len(data) + refBytes(c.Refs)
		at = c.Prev
	}
	all := slices.Clip(base.msgs)
	for i := len(chain) - 1; i >= 0; i-- {
		full, err := resolve(ctx, d.cfg.Payloads, chain[i].Messages, chain[i].Refs)
		if err != nil {
			return cached{}, err
		}
		all = append(all, full...)
		if len(all) != chain[i].Len {
			return cached{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("runlet/temporal: transcript chunk says %d messages, its chain holds %d", chain[i].Len, len(all)), ErrTypePayload, nil)
		}
		all = slices.Clip(all)
	}
	e := cached{msgs: all, bytes: base.bytes + walked}
	d.transcripts.put(ref, nil, e)
	return e, nil
}

func refBytes(refs []PartRef) int {
	n := 0
	for _, r := range refs {
		n += r.Ref.Size
	}
	return n
}

// transcriptCache keeps the transcripts a worker resolved last, by the Ref
// of their last chunk. A transcript's next chunk replaces it, so the cache
// holds about one transcript per run in flight, within cacheBytes of
// stored JSON (oldest first out). Its entries are never changed
// (appending copies: their slices are clipped).
type transcriptCache struct {
	mu    sync.Mutex
	m     map[string]cached
	order []string
	bytes int
}

type cached struct {
	msgs  []runlet.Message
	bytes int
}

// cacheBytes bounds the transcripts a worker keeps resolved in memory, by
// the size of their JSON.
const cacheBytes = 64 << 20

func (c *transcriptCache) get(ref Ref) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[ref.Key()]
	return e, ok
}

func (c *transcriptCache) put(ref Ref, prev *Ref, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]cached)
	}
	if prev != nil {
		c.remove(prev.Key())
	}
	c.remove(ref.Key())
	if e.bytes > cacheBytes {
		return
	}
	e.msgs = slices.Clip(e.msgs)
	c.m[ref.Key()] = e
	c.order = append(c.order, ref.Key())
	c.bytes += e.bytes
	for c.bytes > cacheBytes {
		c.remove(c.order[0])
		c.order = c.order[1:]
	}
	if len(c.order) > 2*len(c.m)+64 { // keys removed out of order: drop them
		keep := make([]string, 0, len(c.m))
		seen := make(map[string]bool, len(c.m))
		for _, k := range c.order {
			if _, ok := c.m[k]; ok && !seen[k] {
				keep, seen[k] = append(keep, k), true
			}
		}
		c.order = keep
	}
}

func (c *transcriptCache) remove(key string) {
	if e, ok := c.m[key]; ok {
		c.bytes -= e.bytes
		delete(c.m, key)
	}
}
