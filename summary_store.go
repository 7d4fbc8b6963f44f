package runlet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// maxStoredSummary bounds a summary row read from (or written to) the
// session's state; a larger row is ignored and the summary recomputed.
const maxStoredSummary = 256 << 10

// storedSummary is the session-state row a Summarizer keeps its summary in.
type storedSummary struct {
	Version int    `json:"v"`
	Config  string `json:"config"` // summarizer.fingerprint
	UpTo    int    `json:"up_to"`  // history messages summarised
	Hash    string `json:"hash"`   // hex SHA-256 of those messages' JSON
	Text    string `json:"text"`
}

// stateKey is the session-state key of this Summarizer's summary.
func (s *summarizer) stateKey() string { return "runlet.summarizer/" + s.cfg.Name }

// fingerprint identifies what determines a summary's text: the model's Go
// type, the Name and the prompt. Keep and Batch only decide when to
// summarise, not what a summary of given messages says.
func (s *summarizer) fingerprint() string {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode([]string{fmt.Sprintf("%T", s.cfg.Model), s.cfg.Name, s.cfg.Prompt})
	return hex.EncodeToString(h.Sum(nil))
}

// persists reports whether summaries are kept in the session's state.
func (s *summarizer) persists(ctx context.Context) bool {
	_, err := sessionState(ctx)
	return !s.cfg.NoStore && err == nil
}

// load reads the stored summary of this session, if one is present and
// valid for msgs (whose turns start at starts). A stored row is input like
// any other: one that is too large, malformed, written by another
// configuration or for another history is ignored (and noted), so the
// summary is recomputed rather than trusted or the run failed.
func (s *summarizer) load(ctx context.Context, msgs []Message, starts []int) (summary, bool) {
	b, err := GetState(ctx, s.stateKey())
	if errors.Is(err, ErrNotFound) {
		return summary{}, false
	}
	if err != nil {
		NotePrepared(ctx, "could not read the stored summary; recomputing", 0)
		return summary{}, false
	}
	sum, reason := s.decode(b, msgs, starts)
	if reason != "" {
		NotePrepared(ctx, "ignored the stored summary ("+reason+"); recomputing", 0)
		return summary{}, false
	}
	return sum, true
}

// decode validates a stored row against msgs; reason says why it is unusable.
func (s *summarizer) decode(b []byte, msgs []Message, starts []int) (sum summary, reason string) {
	if len(b) > maxStoredSummary {
		return summary{}, "too large"
	}
	var st storedSummary
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil || dec.More() {
		return summary{}, "malformed"
	}
	if st.Version != 1 || st.Config != s.fingerprint() {
		return summary{}, "written by another summariser configuration"
	}
	// The summary must end at a turn start of this history, so reusing it
	// never separates a tool call from its result.
	if st.UpTo <= 0 || st.UpTo > len(msgs) || !slices.Contains(starts, st.UpTo) {
		return summary{}, "for another history"
	}
	hash := hashMessages(msgs[:st.UpTo])
	if st.Hash != hex.EncodeToString(hash[:]) {
		return summary{}, "for another history"
	}
	if st.Text == "" || !utf8.ValidString(st.Text) {
		return summary{}, "malformed"
	}
	return summary{upTo: st.UpTo, hash: hash, text: st.Text}, ""
}

// save writes sum to the session's state. A failure costs only a
// recomputation in a later process, so it is noted, not returned.
func (s *summarizer) save(ctx context.Context, sum summary) {
	b, err := json.Marshal(storedSummary{Version: 1, Config: s.fingerprint(), UpTo: sum.upTo, Hash: hex.EncodeToString(sum.hash[:]), Text: sum.text})
	if err != nil || len(b) > maxStoredSummary {
		NotePrepared(ctx, "summary too large to store", 0)
		return
	}
	if err := SetState(ctx, s.stateKey(), b); err != nil {
		NotePrepared(ctx, "could not store the summary", 0)
	}
}
