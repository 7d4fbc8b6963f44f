// Package bedrocktest is a fake Amazon Bedrock runtime for tests and
// offline examples, as net/http/httptest is for HTTP: a loopback server
// that answers Converse and ConverseStream the way Bedrock does (JSON,
// and the binary event stream encoded with the AWS SDK's own encoder),
// and that verifies what Bedrock verifies: every request must carry a
// SigV4 signature that the server recomputes from the request with the
// test credentials, or a Bedrock API key, else it is refused with 403.
//
//	srv := bedrocktest.NewServer(runlettest.WireReply{Text: "Hello!"})
//	defer srv.Close()
//	model, err := bedrock.New(ctx, bedrock.Config{Model: "amazon.nova-micro-v1:0",
//		BaseURL: srv.URL, Region: bedrocktest.Region, Credentials: srv.Credentials()})
//
// Server implements runlettest.WireServer, so modeltest.Run and every
// test scripted with provider-neutral replies run against it.
package bedrocktest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/runlet/runlet/runlettest"
)

// The test credentials the server accepts by default.
const (
	AccessKeyID     = "AKIDRUNLETTEST0000001"
	SecretAccessKey = "runlet-bedrocktest-secret-key-never-real"
	Region          = "us-east-1"
)

// Server is a fake Bedrock runtime endpoint.
type Server struct {
	*httptest.Server

	mu        sync.Mutex
	requests  []runlettest.WireRequest
	faults    []runlettest.Fault
	queue     []runlettest.WireReply
	responder func(runlettest.WireRequest) runlettest.WireReply
	secret    string
	apiKey    string
	// Now is the server's clock for the signature's skew check; nil means
	// time.Now.
	Now func() time.Time
}

var _ runlettest.WireServer = (*Server)(nil)

// NewServer starts a fake Bedrock that answers the given replies in
// order, then an error (or SetReplyResponder's answers). The caller must
// Close it.
func NewServer(replies ...runlettest.WireReply) *Server {
	s := &Server{queue: replies, secret: SecretAccessKey}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the endpoint to configure the adapter with
// (bedrock.Config.BaseURL).
func (s *Server) BaseURL() string { return s.URL }

// Credentials is a static provider of the credentials the server accepts.
func (s *Server) Credentials() aws.CredentialsProvider {
	s.mu.Lock()
	defer s.mu.Unlock()
	return credentials.NewStaticCredentialsProvider(AccessKeyID, s.secret, "")
}

// EnqueueReplies appends provider-neutral replies to the script.
func (s *Server) EnqueueReplies(replies ...runlettest.WireReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetReplyResponder answers the requests that come once the script is
// used up.
func (s *Server) SetReplyResponder(f func(runlettest.WireRequest) runlettest.WireReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = f
}

// InjectFault queues faults, each for one later request, in order.
func (s *Server) InjectFault(f ...runlettest.Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// RequireAPIKey sets the secret access key the signatures are verified
// with (for AccessKeyID); the default is SecretAccessKey.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secret = key
}

// RequireBearer makes the server accept "Authorization: Bearer key" (a
// Bedrock API key) besides signed requests.
func (s *Server) RequireBearer(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// Requests returns the requests received so far.
func (s *Server) Requests() []runlettest.WireRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]runlettest.WireRequest(nil), s.requests...)
}

// serve answers one request.
func (s *Server) serve(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := runlettest.WireRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var fault *runlettest.Fault
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		fault = &f
	}
	secret, apiKey := s.secret, s.apiKey
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	s.mu.Unlock()

	if fault != nil && fault.Status != 0 {
		for k, v := range fault.Header {
			rw.Header()[k] = v
		}
		rw.WriteHeader(fault.Status)
		_, _ = io.WriteString(rw, fault.Body)
		return
	}
	if err := s.authenticate(r, body, secret, apiKey, now()); err != nil {
		writeError(rw, http.StatusForbidden, err.code, err.msg)
		return
	}
	model, stream, ok := route(r)
	if !ok {
		writeError(rw, http.StatusNotFound, "UnknownOperationException", "unknown operation "+r.Method+" "+r.URL.Path)
		return
	}
	var in struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(body, &in) != nil || len(in.Messages) == 0 {
		writeError(rw, http.StatusBadRequest, "ValidationException", "The request body is not a valid ConverseRequest.")
		return
	}
	reply, ok := s.next(req)
	if !ok {
		writeError(rw, http.StatusInternalServerError, "InternalServerException", "bedrocktest: no scripted reply left")
		return
	}
	if reply.Model == "" {
		reply.Model = model
	}
	if stream {
		writeStream(rw, r, reply, len(body), fault)
		return
	}
	writeConverse(rw, reply, len(body), fault)
}

type authError struct{ code, msg string }

// authenticate checks a bearer API key or a SigV4 signature.
func (s *Server) authenticate(r *http.Request, body []byte, secret, apiKey string, now time.Time) *authError {
	auth := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(auth, "Bearer "); ok {
		if apiKey == "" || tok != apiKey {
			return &authError{"UnrecognizedClientException", "The security token included in the request is invalid."}
		}
		return nil
	}
	region := Region
	if cred := credentialRegion(auth); cred != "" {
		region = cred
	}
	if err := VerifySigV4(r, body, AccessKeyID, secret, "bedrock", region, now); err != nil {
		return &authError{"InvalidSignatureException", err.Error()}
	}
	return nil
}

// credentialRegion reads the Region of a SigV4 Authorization header's
// credential scope ("" when it has none): the fake answers any Region.
func credentialRegion(auth string) string {
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(cred, "/")
	if len(parts) != 5 {
		return ""
	}
	return parts[2]
}

// route reads POST /model/{modelId}/converse[-stream].
func route(r *http.Request) (model string, stream, ok bool) {
	if r.Method != http.MethodPost {
		return "", false, false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/model/")
	if !ok {
		return "", false, false
	}
	switch {
	case strings.HasSuffix(rest, "/converse-stream"):
		return strings.TrimSuffix(rest, "/converse-stream"), true, true
	case strings.HasSuffix(rest, "/converse"):
		return strings.TrimSuffix(rest, "/converse"), false, true
	}
	return "", false, false
}

// next returns the reply for a request.
func (s *Server) next(req runlettest.WireRequest) (runlettest.WireReply, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, true
	}
	f := s.responder
	s.mu.Unlock()
	if f == nil {
		return runlettest.WireReply{}, false
	}
	return f(req), true
}

// writeError answers as Bedrock does: the exception's name in
// X-Amzn-ErrorType, {"message"} in the body.
func writeError(rw http.ResponseWriter, status int, code, msg string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("X-Amzn-ErrorType", code+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	rw.Header().Set("X-Amzn-RequestId", "bedrocktest-error")
	rw.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"message": msg})
	_, _ = rw.Write(b)
}
