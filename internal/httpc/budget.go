package httpc

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/sse"
)

// DefaultMaxResponseBytes is the size limit of one response when an
// adapter's Config sets none: 64 MiB of text, reasoning and tool
// arguments, far beyond any real answer, well short of exhausting memory.
const DefaultMaxResponseBytes = 64 << 20

// Budget counts the bytes one response accumulates (text, reasoning, tool
// names and arguments) against a limit, so a server that streams without
// end cannot grow the process until it dies. The zero Budget has the
// default limit.
type Budget struct {
	Provider string
	// Max is the limit in bytes; zero or negative means
	// DefaultMaxResponseBytes.
	Max  int64
	used int64
}

// NewBudget returns a Budget of max bytes (zero or negative: the default).
func NewBudget(provider string, max int64) Budget {
	return Budget{Provider: provider, Max: max}
}

// Limit is the effective limit.
func (b Budget) Limit() int64 {
	if b.Max <= 0 {
		return DefaultMaxResponseBytes
	}
	return b.Max
}

// Add counts n more bytes and returns Err.
func (b *Budget) Add(n int) error {
	b.used += int64(n)
	return b.Err()
}

// Err is nil until the response went past the limit, then a
// *runlet.ProviderError wrapping runlet.ErrResponseTooLarge (not
// retryable: the same request would grow as large again).
func (b *Budget) Err() error {
	if b.used <= b.Limit() {
		return nil
	}
	return &runlet.ProviderError{Provider: b.Provider,
		Message: "response larger than " + strconv.FormatInt(b.Limit(), 10) + " bytes (text, reasoning and tool arguments); raise the adapter's Config.MaxResponseBytes",
		Err:     runlet.ErrResponseTooLarge}
}

// NewSSEReader returns an SSE reader on a streaming response's body whose
// events may hold at most limit bytes (the adapter's MaxResponseBytes,
// resolved, see Budget), so a stream that never ends its event, plain or
// gzipped, costs about the limit in memory before it is refused. Map the
// reader's sse.ErrEventTooLarge with EventTooLarge.
func NewSSEReader(body io.Reader, limit int64) *sse.Reader {
	r := sse.NewReader(body)
	r.SetMaxEventSize(int(min(limit, math.MaxInt32)))
	return r
}

// EventTooLarge is the error of a stream whose event went past limit
// (sse.ErrEventTooLarge): final, a *runlet.ProviderError wrapping
// runlet.ErrResponseTooLarge.
func EventTooLarge(provider, requestID string, limit int64, err error) *runlet.ProviderError {
	return &runlet.ProviderError{Provider: provider, RequestID: requestID,
		Message: "stream event larger than " + strconv.FormatInt(limit, 10) + " bytes; raise the adapter's Config.MaxResponseBytes",
		Err:     fmt.Errorf("%w: %w", runlet.ErrResponseTooLarge, err)}
}
