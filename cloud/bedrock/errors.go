package bedrock

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
)

// errorHeader completes the error of a non-2xx response: Bedrock names
// the exception in the X-Amzn-ErrorType header
// ("ThrottlingException:http://internal.amazon.com/coral/..."), its body
// has only {"message": ...}.
func errorHeader(h http.Header, e *runlet.ProviderError) {
	if t := h.Get("X-Amzn-Errortype"); t != "" {
		e.Code = exceptionName(t)
	}
	if e.RequestID == "" {
		e.RequestID = h.Get("X-Amzn-Requestid")
	}
	classify(e)
}

// exceptionName is an AWS error type without its namespace or URI:
// "aws.protocols#ThrottlingException:http://..." is "ThrottlingException".
func exceptionName(t string) string {
	if i := strings.IndexByte(t, ':'); i >= 0 {
		t = t[:i]
	}
	if i := strings.LastIndexByte(t, '#'); i >= 0 {
		t = t[i+1:]
	}
	return strings.TrimSpace(t)
}

// classify sets Retryable from the exception name, beside the status
// rules every adapter shares (408, 409, 429, 5xx): a throttled request,
// a model not ready yet, an unavailable service, an internal error or a
// model timeout are worth retrying; so is a ModelStreamErrorException
// (424), which the API reference says to retry. A validation, access or
// quota error is not.
func classify(e *runlet.ProviderError) {
	switch e.Code {
	case "ThrottlingException", "ModelNotReadyException", "ServiceUnavailableException",
		"InternalServerException", "ModelTimeoutException", "ModelStreamErrorException":
		e.Retryable = true
	case "ValidationException", "AccessDeniedException", "ResourceNotFoundException",
		"ServiceQuotaExceededException", "ModelErrorException", "UnrecognizedClientException",
		"InvalidSignatureException", "ExpiredTokenException":
		e.Retryable = false
	}
}

// streamException maps an exception message inside an event stream
// (:message-type "exception"): its :exception-type is the union member
// ("throttlingException", ...), its payload {"message": ...}.
func (m *Model) streamException(typ string, payload []byte, requestID string) *runlet.ProviderError {
	var body struct {
		Message            string `json:"message"`
		OriginalStatusCode int    `json:"originalStatusCode"`
		OriginalMessage    string `json:"originalMessage"`
	}
	_ = json.Unmarshal(payload, &body)
	e := &runlet.ProviderError{Provider: m.cfg.name, Message: body.Message, RequestID: requestID}
	if e.Message == "" {
		e.Message = body.OriginalMessage
	}
	if typ != "" {
		e.Code = strings.ToUpper(typ[:1]) + typ[1:]
	}
	switch e.Code {
	case "ThrottlingException":
		e.StatusCode = http.StatusTooManyRequests
	case "ValidationException":
		e.StatusCode = http.StatusBadRequest
	case "InternalServerException":
		e.StatusCode = http.StatusInternalServerError
	case "ServiceUnavailableException":
		e.StatusCode = http.StatusServiceUnavailable
	case "ModelStreamErrorException":
		e.StatusCode = http.StatusFailedDependency
	}
	classify(e)
	if e.Message == "" {
		e.Message = "stream exception " + e.Code
	}
	return e
}

// streamError maps an error message inside an event stream
// (:message-type "error", with :error-code and :error-message headers).
func (m *Model) streamError(code, message, requestID string) *runlet.ProviderError {
	e := &runlet.ProviderError{Provider: m.cfg.name, Code: code, Message: message, RequestID: requestID}
	classify(e)
	if strings.Contains(code, "Throttl") || strings.Contains(code, "Internal") || strings.Contains(code, "Unavailable") {
		e.Retryable = true
	}
	if e.Message == "" {
		e.Message = "stream error " + code
	}
	return e
}
