package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet/mcp"
)

// rawServer is an MCP server written by hand, so that it can misbehave in
// ways the SDK's server will not: it speaks newline-delimited JSON-RPC over
// in-memory pipes (as a subprocess would on stdio), or Streamable HTTP.
// handle answers one request or notification; what it does not handle gets
// the default: initialize is answered, a notification ignored, any other
// request refused as an unknown method.
type rawServer struct {
	handle func(c *rawConn, r *rawRequest) bool
}

// rawRequest is a message the client sent.
type rawRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// isCall reports whether r wants an answer.
func (r *rawRequest) isCall() bool { return len(r.ID) > 0 && string(r.ID) != "null" }

// toolName is the name of a tools/call.
func (r *rawRequest) toolName() string {
	var p struct {
		Name string `json:"name"`
	}
	json.Unmarshal(r.Params, &p)
	return p.Name
}

// rawConn is where a rawServer's handler writes: lines on a pipe, or events
// of an HTTP response.
type rawConn struct {
	mu    sync.Mutex
	w     io.Writer
	lines []string // HTTP: collected, then written as events
}

// send writes one message, as is.
func (c *rawConn) send(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		c.lines = append(c.lines, line)
		return
	}
	io.WriteString(c.w, line+"\n")
}

// reply answers the request id with result, marshalled unless it is a
// json.RawMessage or a string of JSON.
func (c *rawConn) reply(id json.RawMessage, result any) {
	var b []byte
	switch r := result.(type) {
	case string:
		b = []byte(r)
	case json.RawMessage:
		b = r
	default:
		b, _ = json.Marshal(r)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, b))
}

func (c *rawConn) replyError(id json.RawMessage, code int, msg string) {
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg))
}

// text is a tools/call result holding text.
func text(s string) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": s}}}
}

// toolList is a tools/list result.
func toolList(next string, names ...string) map[string]any {
	tools := make([]map[string]any, len(names))
	for i, n := range names {
		tools[i] = map[string]any{"name": n, "description": "The " + n + " tool.", "inputSchema": map[string]any{"type": "object"}}
	}
	res := map[string]any{"tools": tools}
	if next != "" {
		res["nextCursor"] = next
	}
	return res
}

func (s *rawServer) serve(c *rawConn, r *rawRequest) {
	if s.handle != nil && s.handle(c, r) {
		return
	}
	switch {
	case !r.isCall():
	case r.Method == "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(r.Params, &p)
		c.reply(r.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":      map[string]any{"name": "raw", "version": "v0"},
		})
	default:
		c.replyError(r.ID, -32601, "method not found: "+r.Method)
	}
}

// config is a ServerConfig reaching s over a new pair of pipes per
// connection.
func (s *rawServer) config() mcp.ServerConfig {
	return mcp.ServerConfig{Name: "raw", Transport: func() sdkmcp.Transport {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		go s.servePipe(sr, sw)
		return &sdkmcp.IOTransport{Reader: cr, Writer: cw}
	}}
}

func (s *rawServer) servePipe(r io.ReadCloser, w io.WriteCloser) {
	defer w.Close()
	defer r.Close()
	c := &rawConn{w: w}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var req rawRequest
		if json.Unmarshal(line, &req) != nil {
			continue
		}
		s.serve(c, &req)
	}
}

// ServeHTTP serves s over Streamable HTTP, without sessions: what the
// handler sends for a request goes back as the events of one response; a
// request it leaves unanswered holds the response until the client gives
// up.
func (s *rawServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req rawRequest
	if json.Unmarshal(body, &req) != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	if !req.isCall() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	c := &rawConn{}
	s.serve(c, &req)
	if len(c.lines) == 0 {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, l := range c.lines {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", l)
	}
}

// jsonHandler answers with the handler's one message as an
// application/json body, as a server may.
func (s *rawServer) jsonHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &eventRecorder{header: http.Header{}}
		s.ServeHTTP(rec, r)
		if rec.code != 0 && rec.code != http.StatusOK {
			w.WriteHeader(rec.code)
			return
		}
		data, _, _ := strings.Cut(strings.TrimPrefix(rec.buf.String(), "event: message\ndata: "), "\n")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, data)
	})
}

// eventRecorder records what rawServer.ServeHTTP writes.
type eventRecorder struct {
	header http.Header
	code   int
	buf    bytes.Buffer
}

func (r *eventRecorder) Header() http.Header         { return r.header }
func (r *eventRecorder) WriteHeader(code int)        { r.code = code }
func (r *eventRecorder) Write(p []byte) (int, error) { return r.buf.Write(p) }
