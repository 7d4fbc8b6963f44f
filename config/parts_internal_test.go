package config

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/runlet/runlet"
)

// A config's policy on a tool keeps the tool's parts: an MCP tool's image
// stays an image.
func TestPolicyToolKeepsParts(t *testing.T) {
	img := runlet.Image("image/png", []byte("\x89PNG"))
	inner := runlet.NewTool("shot", "", func(context.Context, struct{}) (runlet.ToolOutput, error) {
		return runlet.Output(runlet.Text("t"), img), nil
	})
	wrapped := withPolicy(inner, ToolRef{Timeout: time.Second})
	pt, ok := wrapped.(runlet.PartsTool)
	if !ok {
		t.Fatal("the wrapped tool is not a PartsTool")
	}
	out, err := pt.CallParts(t.Context(), json.RawMessage(`{}`))
	if err != nil || !reflect.DeepEqual(out.Parts, []runlet.Part{runlet.Text("t"), img}) {
		t.Errorf("CallParts = %#v, %v", out, err)
	}
}
