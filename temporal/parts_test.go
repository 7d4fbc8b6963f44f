package temporal

import (
	"bytes"
	"context"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// TestToolResultPartsInDurableRuns: a tool returning an image and a
// structured value gets both to the next model call, the Result and the
// session, with and without a payload store (where the result, over the
// inline limit, is kept and read back).
func TestToolResultPartsInDurableRuns(t *testing.T) {
	png := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 2<<10)
	chart := runlet.NewTool("chart", "Draws a chart.", func(context.Context, struct{}) (runlet.ToolOutput, error) {
		return runlet.ToolOutput{Parts: []runlet.Part{runlet.Text("the chart"), runlet.Image("image/png", png)}, Structured: map[string]int{"points": 3}}, nil
	})
	check := func(t *testing.T, where string, res runlet.ToolResultPart) {
		t.Helper()
		if len(res.Parts) != 2 || res.Content != "the chart" || string(res.Structured) != `{"points":3}` {
			t.Fatalf("%s: result %+v", where, res)
		}
		if img, ok := res.Parts[1].(runlet.ImagePart); !ok || !bytes.Equal(img.Data, png) || img.MediaType != "image/png" {
			t.Fatalf("%s: image part %T", where, res.Parts[1])
		}
	}
	for _, tc := range []struct {
		name     string
		payloads *MemoryPayloadStore
	}{{"inline", nil}, {"payload store", NewMemoryPayloadStore()}} {
		t.Run(tc.name, func(t *testing.T) {
			model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "chart", `{}`)), runlettest.TextReply("drawn"))
			store := runlet.NewMemoryStore()
			cfg := Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{chart}}}, Sessions: store}
			if tc.payloads != nil {
				cfg.Payloads = tc.payloads
			}
			e := env(t, mustNew(t, cfg))
			e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "chart it", SessionID: "s"})
			var wr workflowResult
			if err := e.GetWorkflowResult(&wr); err != nil {
				t.Fatal(err)
			}
			req := model.Requests()[1]
			check(t, "next model request", toolResults(req.Messages[len(req.Messages)-1])[0])
			hist, _ := store.LoadSession(context.Background(), "s")
			check(t, "session", toolResults(hist[2])[0])
			res, err := readBack(context.Background(), tc.payloads, &wr.Result, wr.Refs)
			if err != nil {
				t.Fatal(err)
			}
			check(t, "result", toolResults(res.Messages[2])[0])
			if tc.payloads != nil {
				if n, _ := tc.payloads.Stats(); n == 0 || len(wr.Refs) != 1 {
					t.Fatalf("%d payloads stored, %d refs: the result was not kept in the store", n, len(wr.Refs))
				}
			}
		})
	}
}
