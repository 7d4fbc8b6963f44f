package runlet

import (
	"encoding/hex"
	"encoding/json"
	"testing"
)

// A stored summary whose hash matches but which ends inside a turn (between
// a tool call and its result) is refused: reusing it would split the pair.
func TestStoredSummaryMustEndAtTurnStart(t *testing.T) {
	msgs := []Message{
		UserText("q"),
		{Role: RoleAssistant, Parts: []Part{ToolCallPart{ID: "c", Name: "f", Arguments: json.RawMessage(`{}`)}}},
		{Role: RoleTool, Parts: []Part{ToolResultPart{CallID: "c", Name: "f", Content: "r"}}},
		AssistantText("a"),
		UserText("q2"),
	}
	s := Summarizer(SummarizerConfig{Model: nil}).(*summarizer)
	for upTo, want := range map[int]string{2: "for another history", 4: ""} {
		hash := hashMessages(msgs[:upTo])
		row, _ := json.Marshal(storedSummary{Version: 1, Config: s.fingerprint(), UpTo: upTo, Hash: hex.EncodeToString(hash[:]), Text: "t"})
		if _, reason := s.decode(row, msgs, turnStarts(msgs)); reason != want {
			t.Errorf("up_to %d: reason %q, want %q", upTo, reason, want)
		}
	}
}
