package modelkit_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
)

// A whole part (a hosted tool's) keeps its place between streamed parts,
// and citations attach to the text part being streamed.
func TestAccumulatorWholePartsAndCitations(t *testing.T) {
	var a modelkit.Accumulator
	hosted := runlet.HostedToolPart{ID: "ws_1", Kind: runlet.HostedWebSearch, Raw: json.RawMessage(`[{"type":"web_search_call"}]`)}
	cite := runlet.Citation{URL: "https://go.dev", Start: 0, End: 2}
	a.Add(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "Let me look. "})
	a.AddPart(hosted)
	a.Add(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "Go"})
	a.AddCitation(cite)
	a.Add(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: " 1.26"})
	a.AddPart(hosted)
	a.AddCitation(cite) // no text part open: an empty one carries it
	want := []runlet.Part{
		runlet.TextPart{Text: "Let me look. "},
		hosted,
		runlet.TextPart{Text: "Go 1.26", Citations: []runlet.Citation{cite}},
		hosted,
		runlet.TextPart{Citations: []runlet.Citation{cite}},
	}
	if got := a.Message().Parts; !reflect.DeepEqual(got, want) {
		t.Fatalf("parts\n %#v\nwant\n %#v", got, want)
	}
	if a.Len() != 5 {
		t.Fatalf("Len = %d", a.Len())
	}
}
