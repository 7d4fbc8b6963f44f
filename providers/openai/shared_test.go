package openai

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test of the package (Chat Completions or
// Responses) leaks a goroutine: streams, retries and cancellations must all
// clean up.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
