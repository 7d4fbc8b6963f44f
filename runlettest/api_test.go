package runlettest_test

import (
	"testing"

	"github.com/runlet/runlet/internal/apitest"
)

// The record/replay and fake-model parts of the API: what a test needs,
// without the demo plumbing of the runlet command and the examples
// (internal/demo).
func TestAPIReplayAndModel(t *testing.T) {
	apitest.Check(t, []string{
		// replay*.go
		"Cassette", "Cassette.Save", "CassetteVersion", "LoadCassette", "MaxCassetteBytes", "ParseCassette",
		"Interaction", "RecordedRequest", "RecordedResponse", "Body", "Body.Bytes", "BodyFrom",
		"Recorder", "Recorder.Cassette", "Recorder.RoundTrip", "Recorder.Save", "NewRecorder",
		"RecorderOption", "RedactHeaders", "DefaultRedactedHeaders",
		"Replayer", "Replayer.Done", "Replayer.Err", "Replayer.Remaining", "Replayer.RoundTrip", "NewReplayer",
		"ReplayOption", "IgnoreBody", "IgnoreFields", "WithPacing",
		"ErrCassetteEnd", "MismatchError", "MismatchError.Error", "MismatchError.Retryable",
		// model.go
		"Model", "Model.Generate", "Model.Push", "Model.Requests", "Model.Stream", "NewModel",
		"Reply", "TextReply", "ToolCallReply", "ErrorReply", "Call",
	}, ".", "replay*.go", "model.go")
}
