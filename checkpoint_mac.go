package runlet

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
)

// WithCheckpointKey makes the Runtime authenticate the checkpoints it
// saves and resumes, so that a change made to one outside the program (in
// the store's table, a backup, a copy from another run) is detected: it
// saves each checkpoint with an HMAC-SHA256 under key in Checkpoint.MAC,
// and Resume refuses, before acting on it, a checkpoint whose MAC is
// missing or matches none of its keys, with a *CheckpointError wrapping
// ErrCheckpointMAC. The checkpoint stays in the store.
//
// To rotate keys, pass the new key first and the old ones after it:
// checkpoints are saved under key and verified under any of them, so the
// runs interrupted under an old key can still be resumed; drop an old key
// once no checkpoint saved with it is waiting. Checkpoints saved by a
// Runtime without a key have no MAC, and a Runtime with keys refuses
// them: resume them before setting a key, with a Runtime without one.
//
// The key is a secret, such as 32 random bytes; it must be at least 16
// bytes long (WithCheckpointKey panics otherwise, like a nil key, a
// programming error). The Runtime keeps copies of the keys and puts them
// in no error, event, log or printed value.
func WithCheckpointKey(key []byte, previous ...[]byte) RuntimeOption {
	keys := &checkpointKeys{}
	for _, k := range append([][]byte{key}, previous...) {
		if len(k) < 16 {
			panic(fmt.Sprintf("runlet: WithCheckpointKey: a key of %d bytes; it needs at least 16 (32 random bytes, say)", len(k)))
		}
		k := slices.Clone(k)
		keys.macs = append(keys.macs, func(data []byte) []byte { return checkpointMAC(k, data) })
	}
	return runtimeOption(func(rt *Runtime) { rt.checkpointKeys = keys })
}

// checkpointKeys are a Runtime's checkpoint keys, as functions computing
// the MAC under each: the first signs, any of them verifies. Functions,
// so that printing a Runtime, with any verb, shows no key.
type checkpointKeys struct{ macs []func(data []byte) []byte }

// sign sets cp.MAC: the HMAC-SHA256 of cp's JSON without MAC, under the
// first key. The JSON is the one cp has after a trip through JSON (as a
// store gives it back: options' numbers as float64, arguments compacted),
// so that verify, which has only the decoded checkpoint, computes it over
// the same bytes.
func (k *checkpointKeys) sign(cp *Checkpoint) error {
	cp.MAC = ""
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	var trip Checkpoint
	if err := json.Unmarshal(b, &trip); err != nil {
		return err
	}
	if b, err = json.Marshal(&trip); err != nil {
		return err
	}
	cp.MAC = hex.EncodeToString(k.macs[0](b))
	return nil
}

// verify checks cp.MAC under each key. It returns a *CheckpointError
// wrapping ErrCheckpointMAC if none matches.
func (k *checkpointKeys) verify(cp *Checkpoint, runID string) error {
	if cp.MAC == "" {
		return &CheckpointError{RunID: runID, Reason: "it has no MAC and this Runtime has a checkpoint key", Err: ErrCheckpointMAC}
	}
	want, err := hex.DecodeString(cp.MAC)
	if err == nil && len(want) == sha256.Size {
		c := *cp
		c.MAC = ""
		b, err := json.Marshal(&c)
		if err != nil {
			return &CheckpointError{RunID: runID, Reason: "it does not encode", Err: err}
		}
		for _, mac := range k.macs {
			if hmac.Equal(mac(b), want) {
				return nil
			}
		}
	}
	return &CheckpointError{RunID: runID, Reason: "its MAC matches none of this Runtime's checkpoint keys (it was changed after it was saved, or saved with another key)", Err: ErrCheckpointMAC}
}

func checkpointMAC(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}
