package httpc

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet"
)

// Retryable reports whether an HTTP status is worth retrying: 408, 409, 429
// and every 5xx (Anthropic's 529 overloaded included).
func Retryable(status int) bool {
	return status == 408 || status == 409 || status == 429 || status >= 500
}

// ErrorFromResponse reads (at most 64 KiB of) an error response, closes it
// and maps it to a *runlet.ProviderError. It understands the OpenAI envelope
// {"error":{"message","type","code"}} and the Anthropic one
// {"type":"error","error":{"type","message"}}; any other body (an HTML page
// from a proxy, say) becomes a short plain-text message.
func ErrorFromResponse(provider string, resp *http.Response) *runlet.ProviderError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := ErrorFromBody(provider, body)
	e.StatusCode = resp.StatusCode
	e.Retryable = Retryable(resp.StatusCode) || e.Retryable
	if e.Code == "insufficient_quota" || e.Type == "insufficient_quota" {
		e.Retryable = false // a 429 that waiting does not cure: the account is out of credit
	}
	if d := RetryAfter(resp.Header); d > 0 || e.RetryAfter == 0 {
		e.RetryAfter = d // else keep the body's delay (google.rpc.RetryInfo)
	}
	e.RequestID = RequestID(resp.Header)
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// ErrorFromBody maps an error payload, from an HTTP body or an error event
// inside a stream, to a *runlet.ProviderError; StatusCode is the HTTP
// status the payload names (a numeric code or status_code), else zero.
// Besides the OpenAI and Anthropic envelopes it reads Google's
// google.rpc.Status {"error":{"code","message","status","details"}}, also
// wrapped in a one-element array: status becomes Code, and a
// google.rpc.RetryInfo detail's retryDelay becomes RetryAfter. A non-JSON
// body becomes its plain text, unshortened: Redact shortens it after
// masking secrets.
func ErrorFromBody(provider string, body []byte) *runlet.ProviderError {
	e := &runlet.ProviderError{Provider: provider}
	body = unwrapArray(body)
	var env struct {
		Type    string          `json:"type"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && (len(env.Error) > 0 || env.Message != "") {
		var inner struct {
			Message    string            `json:"message"`
			Type       string            `json:"type"`
			Code       json.RawMessage   `json:"code"`
			StatusCode int               `json:"status_code"` // Groq
			Status     string            `json:"status"`      // google.rpc.Status
			Details    []json.RawMessage `json:"details"`     // google.rpc.Status
		}
		if len(env.Error) > 0 && env.Error[0] == '{' && json.Unmarshal(env.Error, &inner) == nil {
			e.Message, e.Type, e.Code = inner.Message, inner.Type, CodeString(inner.Code)
			// A numeric code is the HTTP status (google.rpc.Status,
			// OpenRouter), as status_code is (Groq): an error sent inside
			// a stream, with status 200, names its status as a response's
			// does ("HTTP 404"), and classifies by it.
			if n, err := strconv.Atoi(e.Code); err == nil && httpStatus(n) {
				e.StatusCode, e.Code = n, ""
			}
			if httpStatus(inner.StatusCode) {
				e.StatusCode = inner.StatusCode
			}
			e.Retryable = e.StatusCode != 0 && Retryable(e.StatusCode)
			if inner.Status != "" {
				e.Code = inner.Status
				e.Retryable = googleRetryable(inner.Status)
				e.RetryAfter = googleRetryDelay(inner.Details)
			}
		} else if len(env.Error) > 0 && env.Error[0] == '"' {
			_ = json.Unmarshal(env.Error, &e.Message)
		}
		if e.Message == "" {
			e.Message = env.Message
		}
		if e.Type == "" && env.Type != "error" {
			e.Type = env.Type
		}
		switch e.Type {
		case "overloaded_error", "rate_limit_error", "api_error", "server_error":
			e.Retryable = true
		}
		return e
	}
	e.Message = plainText(body)
	return e
}

// httpStatus reports whether n is an HTTP error status.
func httpStatus(n int) bool { return n >= 400 && n <= 599 }

// CodeString reads an error code that may be a JSON string, a number or
// null ("" for null or absent).
func CodeString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw) // a numeric code
}

// plainText turns a non-JSON body into one line of text without markup.
// It does not shorten it: Redact does, after masking secrets, so a cut
// never leaves part of a key behind.
func plainText(body []byte) string {
	var b strings.Builder
	inTag := false
	space := false
	for _, r := range string(body) {
		switch {
		case r == '<':
			inTag = true
		case r == '>' && inTag:
			inTag = false
			space = true
		case inTag:
		case r == '\n' || r == '\r' || r == '\t' || r == ' ':
			space = true
		default:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		}
	}
	return b.String()
}

// RetryAfter reads retry-after-ms, then Retry-After (seconds or HTTP date).
func RetryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// RequestID returns the provider's request ID header: X-Request-Id
// (OpenAI and most compatible servers) or Request-Id (Anthropic).
func RequestID(h http.Header) string {
	if v := h.Get("X-Request-Id"); v != "" {
		return v
	}
	return h.Get("Request-Id")
}

// scrub rewrites transport errors without the URL's query and user info,
// in case a user-supplied base URL carries a credential there. A URL that
// does not parse (a bad port, a control character) is not shown at all:
// its credentials cannot be told from the rest.
func scrub(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	where := "(unparsable URL)"
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		where = u.String()
	}
	return &url.Error{Op: ue.Op, URL: where, Err: ue.Err}
}
