package uistream

import (
	"testing"
)

// FuzzAISDKRequest: whatever the page sends, decoding it gives a turn or
// an error, never a panic, and a turn is either a resume with decisions
// or a run with input.
func FuzzAISDKRequest(f *testing.F) {
	f.Add([]byte(`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","parts":[{"type":"step-start"},{"type":"dynamic-tool","toolName":"t","toolCallId":"c1","state":"approval-responded","approval":{"id":"run_1:c1","approved":true}}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","parts":[{"type":"file","mediaType":"image/png","url":"data:image/png;base64,AAAA"}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","parts":[{"type":"tool-x","toolCallId":"c","state":"output-error","input":"nope","errorText":"e"}]},{"role":"user","parts":[{"type":"text","text":"?"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		turn, err := decodeUIRequest(body)
		if err != nil {
			return
		}
		switch {
		case turn.resume != "":
			if len(turn.decisions) == 0 {
				t.Errorf("a resume without decisions from %q", body)
			}
		case len(turn.input) != 1 || len(turn.input[0].Parts) == 0:
			t.Errorf("a run without input from %q", body)
		}
	})
}
