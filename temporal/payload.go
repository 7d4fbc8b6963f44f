package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/temporal"
)

// PayloadStore keeps what a durable run keeps out of its workflow history
// (see Config.Payloads): large tool results and the run's transcript, each
// under a key derived from its content ("sha256/" and the hex SHA-256 of
// the bytes). A key names one content forever, so a Put of a key already
// present may keep either copy, and a retried activity that puts again
// changes nothing. Every worker of a task queue must share one store.
//
// Nothing is ever deleted by the workflow: a store may expire keys that no
// running or retained workflow needs (a run's keys are read while it runs,
// and by Wait).
type PayloadStore interface {
	PutPayload(ctx context.Context, key string, data []byte) error
	// GetPayload returns the data, or an error wrapping runlet.ErrNotFound.
	GetPayload(ctx context.Context, key string) ([]byte, error)
}

// Ref names content kept in a PayloadStore: its SHA-256 and size. What is
// read back under it is checked against both.
type Ref struct {
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
}

// Key is the store key of the content.
func (r Ref) Key() string { return "sha256/" + r.SHA256 }

// PartRef says that part Part of message Msg of a list is kept in the
// payload store under Ref: the list holds a stand-in with the part's
// CallID, Name and IsError, whose Content says where the result is.
type PartRef struct {
	Msg  int `json:"msg"`
	Part int `json:"part"`
	Ref  Ref `json:"ref"`
}

// ErrTypePayload is the ApplicationError type of a payload that is missing
// from the store or does not match its Ref; it is never retried.
const ErrTypePayload = "runlet.PayloadError"

// defaultInlineLimit is the size, in bytes of JSON, up to which a tool
// result stays in the history (Config.InlineLimit).
const defaultInlineLimit = 2 << 10

// putPayload stores data under its content address and returns its Ref.
func putPayload(ctx context.Context, s PayloadStore, data []byte) (Ref, error) {
	sum := sha256.Sum256(data)
	ref := Ref{SHA256: hex.EncodeToString(sum[:]), Size: len(data)}
	if err := s.PutPayload(ctx, ref.Key(), data); err != nil {
		return Ref{}, fmt.Errorf("runlet/temporal: storing payload %s: %w", ref.Key(), err)
	}
	return ref, nil
}

// getPayload reads the content of ref and checks it against ref: a store
// that lost it or returns other bytes fails the activity for good, with a
// typed error, rather than giving a model or a caller something else.
func getPayload(ctx context.Context, s PayloadStore, ref Ref) ([]byte, error) {
	if s == nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("runlet/temporal: payload %s: the worker has no payload store (Config.Payloads)", ref.Key()), ErrTypePayload, nil)
	}
	data, err := s.GetPayload(ctx, ref.Key())
	switch {
	case errors.Is(err, runlet.ErrNotFound):
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("runlet/temporal: payload %s is not in the payload store", ref.Key()), ErrTypePayload, err)
	case err != nil:
		return nil, fmt.Errorf("runlet/temporal: reading payload %s: %w", ref.Key(), err)
	}
	sum := sha256.Sum256(data)
	if len(data) != ref.Size || hex.EncodeToString(sum[:]) != ref.SHA256 {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("runlet/temporal: payload %s: the store returned other content (%d bytes)", ref.Key(), len(data)), ErrTypePayload, nil)
	}
	return data, nil
}

// offloadResult moves a tool result larger than the inline limit to the
// store, as a one-part tool message (so that every part type a message
// carries round-trips), and returns its stand-in and Ref. A small result,
// or a worker without a store, keeps the result as it is.
func (d *Durable) offloadResult(ctx context.Context, res runlet.ToolResultPart) (runlet.ToolResultPart, *Ref, error) {
	if d.cfg.Payloads == nil {
		return res, nil, nil
	}
	data, err := json.Marshal(runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{res}})
	if err != nil || len(data) <= d.inlineLimit() {
		return res, nil, nil // what cannot be marshalled fails where Temporal encodes it, as before
	}
	ref, err := putPayload(ctx, d.cfg.Payloads, data)
	if err != nil {
		return res, nil, err
	}
	return standIn(res, ref), &ref, nil
}

// standIn is the part a list holds for a result kept in the store. Its
// Content is a note for people reading the history; nothing parses it
// (the PartRef is what is resolved).
func standIn(res runlet.ToolResultPart, ref Ref) runlet.ToolResultPart {
	return runlet.ToolResultPart{CallID: res.CallID, Name: res.Name, IsError: res.IsError,
		Content: fmt.Sprintf("[kept in the payload store: %s, %d bytes]", ref.Key(), ref.Size)}
}

func (d *Durable) inlineLimit() int {
	if d.cfg.InlineLimit > 0 {
		return d.cfg.InlineLimit
	}
	return defaultInlineLimit
}

// resolve returns msgs with the parts refs name read back from the store.
// msgs is not changed.
func resolve(ctx context.Context, s PayloadStore, msgs []runlet.Message, refs []PartRef) ([]runlet.Message, error) {
	if len(refs) == 0 {
		return msgs, nil
	}
	out := make([]runlet.Message, len(msgs))
	copy(out, msgs)
	cloned := make(map[int]bool, len(refs))
	for _, r := range refs {
		if r.Msg < 0 || r.Msg >= len(out) || r.Part < 0 || r.Part >= len(out[r.Msg].Parts) {
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("runlet/temporal: payload reference to part %d of message %d of %d", r.Part, r.Msg, len(out)), ErrTypePayload, nil)
		}
		data, err := getPayload(ctx, s, r.Ref)
		if err != nil {
			return nil, err
		}
		var m runlet.Message
		if err := json.Unmarshal(data, &m); err != nil || len(m.Parts) != 1 {
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("runlet/temporal: payload %s is not a stored tool result", r.Ref.Key()), ErrTypePayload, err)
		}
		if !cloned[r.Msg] {
			out[r.Msg].Parts = append([]runlet.Part(nil), out[r.Msg].Parts...)
			cloned[r.Msg] = true
		}
		out[r.Msg].Parts[r.Part] = m.Parts[0]
	}
	return out, nil
}

// shiftRefs returns the refs of msgs[from:] indexed from 0.
func shiftRefs(refs []PartRef, from int) []PartRef {
	var out []PartRef
	for _, r := range refs {
		if r.Msg >= from {
			r.Msg -= from
			out = append(out, r)
		}
	}
	return out
}

// MemoryPayloadStore is a PayloadStore in memory, for tests and for a
// single worker process: what it holds dies with the process, so runs
// that need it cannot move to another worker.
type MemoryPayloadStore struct {
	mu    sync.Mutex
	data  map[string][]byte
	bytes int
}

// NewMemoryPayloadStore returns an empty MemoryPayloadStore.
func NewMemoryPayloadStore() *MemoryPayloadStore {
	return &MemoryPayloadStore{data: map[string][]byte{}}
}

// PutPayload keeps a copy of data under key.
func (s *MemoryPayloadStore) PutPayload(_ context.Context, key string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.data[key]; !ok {
		s.data[key] = append([]byte(nil), data...)
		s.bytes += len(data)
	}
	return nil
}

// GetPayload returns a copy of what key holds.
func (s *MemoryPayloadStore) GetPayload(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.data[key]
	if !ok {
		return nil, fmt.Errorf("runlet/temporal: payload %s: %w", key, runlet.ErrNotFound)
	}
	return append([]byte(nil), b...), nil
}

// Stats reports how many payloads the store holds and their total size.
func (s *MemoryPayloadStore) Stats() (count, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.data), s.bytes
}

// DirPayloadStore is a PayloadStore in a directory: one file per payload,
// written to a temporary file and renamed into place, so a reader never
// sees half of one. Workers on one machine (or on a shared file system)
// can share it; it keeps everything until its files are removed.
type DirPayloadStore struct {
	dir string
}

// NewDirPayloadStore returns a store in dir, creating it if need be.
func NewDirPayloadStore(dir string) (*DirPayloadStore, error) {
	if err := os.MkdirAll(filepath.Join(dir, "sha256"), 0o755); err != nil {
		return nil, fmt.Errorf("runlet/temporal: payload store: %w", err)
	}
	return &DirPayloadStore{dir: dir}, nil
}

// path returns the file of key, refusing keys that are not content
// addresses (so no key reaches outside the directory).
func (s *DirPayloadStore) path(key string) (string, error) {
	hexSum, ok := strings.CutPrefix(key, "sha256/")
	if _, err := hex.DecodeString(hexSum); !ok || err != nil || len(hexSum) != 2*sha256.Size {
		return "", fmt.Errorf("runlet/temporal: payload key %q is not a content address", truncate(key, 100))
	}
	return filepath.Join(s.dir, "sha256", hexSum), nil
}

// PutPayload writes data under key, unless the key is there already.
func (s *DirPayloadStore) PutPayload(_ context.Context, key string, data []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), p)
}

// GetPayload reads what key holds.
func (s *DirPayloadStore) GetPayload(_ context.Context, key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("runlet/temporal: payload %s: %w", key, runlet.ErrNotFound)
	}
	return b, err
}
