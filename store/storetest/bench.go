package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/runlet/runlet"
)

// Benchmark measures the two operations a run does on its session store:
//
//   - AppendTurn: appending one tool-using turn (an assistant message with
//     a tool call, the tool result, the final answer: 3 messages) to a
//     growing session;
//   - LoadSession1000: loading a session of 1,000 messages.
//
// newStore is called once per sub-benchmark.
func Benchmark(b *testing.B, newStore func(b *testing.B) runlet.Store) {
	b.Run("AppendTurn", func(b *testing.B) {
		s := newStore(b)
		ctx := context.Background()
		sid := uid(b, "bench")
		n := 0
		b.ReportAllocs()
		for b.Loop() {
			turn := benchTurn(n)
			if err := s.AppendSession(ctx, sid, n, turn); err != nil {
				b.Fatal(err)
			}
			n += len(turn)
		}
	})
	b.Run("LoadSession1000", func(b *testing.B) {
		s := newStore(b)
		ctx := context.Background()
		sid := uid(b, "bench")
		msgs := conversation(1000, "bench")
		for i := 0; i < len(msgs); i += 100 {
			if err := s.AppendSession(ctx, sid, i, msgs[i:i+100]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			got, err := s.LoadSession(ctx, sid)
			if err != nil {
				b.Fatal(err)
			}
			if len(got) != 1000 {
				b.Fatalf("loaded %d messages", len(got))
			}
		}
	})
}

// benchTurn returns a typical 3-message turn (about 600 bytes of JSON).
func benchTurn(i int) []runlet.Message {
	id := fmt.Sprintf("call_%08d", i)
	return []runlet.Message{
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "The user asked about the weather; I will call the tool.", Signature: "EqQBCkYIBxgCKkD3signature", Provider: "anthropic"},
			runlet.ToolCallPart{ID: id, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Shanghai","unit":"celsius"}`)},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{
			runlet.ToolResultPart{CallID: id, Name: "get_weather", Content: `{"temp":21.5,"sky":"clear","humidity":0.61,"wind_kph":12}`},
		}},
		runlet.AssistantText("It is 21.5 °C and clear in Shanghai, with a light breeze and 61% humidity."),
	}
}
