package runlet_test

import (
	"encoding/json"
	"testing"

	"github.com/runlet/runlet"
)

func BenchmarkMessageUnmarshal(b *testing.B) {
	msgs := make([]runlet.Message, 0, 100)
	for range 25 {
		msgs = append(msgs, runlet.UserText("What is the weather in Paris today, and should I take an umbrella?"),
			runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ReasoningPart{Text: "think", Signature: "sig", Provider: "anthropic"}, runlet.ToolCallPart{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
			runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c1", Name: "get_weather", Content: "light rain, 12°C"}}},
			runlet.AssistantText("Light rain and 12°C: take an umbrella."))
	}
	data, _ := json.Marshal(msgs)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var out []runlet.Message
		if err := json.Unmarshal(data, &out); err != nil || len(out) != 100 {
			b.Fatal(err)
		}
	}
}
