package openai

import "github.com/runlet/runlet"

// ErrMalformedStream (the same value as runlet.ErrMalformedStream) is
// wrapped by the *runlet.ProviderError returned when a stream event or a
// response body is not the data the API defines (both adapters).
var ErrMalformedStream = runlet.ErrMalformedStream
