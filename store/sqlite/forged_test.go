package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A checkpoint row edited with SQL, as anyone who can write the database
// file can: Resume refuses it with a typed error, leaves it in place and
// runs nothing, whatever the row says about approvals.
func TestResumeRefusesCheckpointEditedWithSQL(t *testing.T) {
	key := []byte("a checkpoint key of 32 bytes....")
	cases := []struct {
		name    string
		key     bool                            // the Runtime signs and verifies checkpoints
		edit    func(row map[string]any) []byte // nil: the row is replaced by raw
		raw     string
		wantErr error
	}{
		{name: "pending call moved into a forged nested entry", wantErr: runlet.ErrInvalidCheckpoint,
			edit: func(row map[string]any) []byte {
				nested := map[string]any{}
				for k, v := range row {
					nested[k] = v
				}
				row["nested"] = map[string]any{"d1": nested}
				row["pending"] = []any{}
				return mustJSON(t, row)
			}},
		{name: "approval-needing call dropped from pending", wantErr: runlet.ErrInvalidCheckpoint,
			edit: func(row map[string]any) []byte { row["pending"] = nil; return mustJSON(t, row) }},
		{name: "nested entry null", wantErr: runlet.ErrInvalidCheckpoint,
			edit: func(row map[string]any) []byte {
				row["pending"], row["nested"] = []any{}, map[string]any{"d1": nil}
				return mustJSON(t, row)
			}},
		{name: "no messages", wantErr: runlet.ErrInvalidCheckpoint,
			edit: func(row map[string]any) []byte { row["messages"] = nil; return mustJSON(t, row) }},
		{name: "wrong type", wantErr: runlet.ErrInvalidCheckpoint,
			edit: func(row map[string]any) []byte { row["turn"] = "one"; return mustJSON(t, row) }},
		{name: "not JSON", raw: `{"run_id": oops`, wantErr: runlet.ErrInvalidCheckpoint},
		{name: "null", raw: `null`, wantErr: runlet.ErrInvalidCheckpoint},
		{name: "arguments changed under a key", key: true, wantErr: runlet.ErrCheckpointMAC,
			edit: func(row map[string]any) []byte {
				return []byte(strings.ReplaceAll(string(mustJSON(t, row)), "/tmp/a", "/etc/passwd"))
			}},
		{name: "forged result under a key", key: true, wantErr: runlet.ErrCheckpointMAC,
			edit: func(row map[string]any) []byte {
				row["pending"] = []any{}
				row["results"] = []any{map[string]any{"type": "tool_result", "call_id": "d1", "name": "delete_file", "content": "deleted"}}
				return mustJSON(t, row)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "runlet.db")
			store := openAt(t, path)
			var ran atomic.Int32
			del := runlet.NewTool("delete_file", "Deletes a file.", func(ctx context.Context, in struct {
				Path string `json:"path"`
			}) (string, error) {
				ran.Add(1)
				return "deleted", nil
			}, runlet.WithApproval())
			agent := &runlet.Agent{Name: "janitor", Tools: []runlet.Tool{del}, Model: runlettest.NewModel(
				runlettest.ToolCallReply(runlettest.Call("d1", "delete_file", `{"path":"/tmp/a"}`)),
				runlettest.TextReply("Done."),
			)}
			opts := []runlet.RuntimeOption{runlet.WithStore(store)}
			if tc.key {
				opts = append(opts, runlet.WithCheckpointKey(key))
			}
			res, err := runlet.NewRuntime(opts...).Run(ctx, agent, "clean up", runlet.WithSession("s"))
			if err != nil || res.Status != runlet.StateInterrupted {
				t.Fatalf("run: %+v, %v", res, err)
			}

			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var data []byte
			if err := db.QueryRowContext(ctx, `SELECT checkpoint FROM runlet_checkpoints WHERE run_id = ?`, res.RunID).Scan(&data); err != nil {
				t.Fatal(err)
			}
			edited := []byte(tc.raw)
			if tc.edit != nil {
				var row map[string]any
				if err := json.Unmarshal(data, &row); err != nil {
					t.Fatal(err)
				}
				edited = tc.edit(row)
			}
			if _, err := db.ExecContext(ctx, `UPDATE runlet_checkpoints SET checkpoint = ? WHERE run_id = ?`, string(edited), res.RunID); err != nil {
				t.Fatal(err)
			}

			// Resume with the one decision a caller could give: reject.
			_, err = runlet.NewRuntime(opts...).Resume(ctx, agent, res.RunID, runlet.Reject("d1", "no"))
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, runlet.ErrInvalidCheckpoint) {
				t.Fatalf("resume: %v; want %v", err, tc.wantErr)
			}
			var ce *runlet.CheckpointError
			if !errors.As(err, &ce) || ce.RunID != res.RunID {
				t.Fatalf("resume: %v; want a *runlet.CheckpointError of run %q", err, res.RunID)
			}
			if ran.Load() != 0 {
				t.Fatal("the tool needing approval ran")
			}
			var left string
			if err := db.QueryRowContext(ctx, `SELECT checkpoint FROM runlet_checkpoints WHERE run_id = ?`, res.RunID).Scan(&left); err != nil || left != string(edited) {
				t.Fatalf("the refused row is not left as it was: %v", err)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
