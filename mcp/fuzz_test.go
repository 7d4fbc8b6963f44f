package mcp_test

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/runlet/runlet/mcp"
)

// FuzzClientMessage has a server send arbitrary bytes to the client: in
// place of its tools/list answer when the input starts with "list:",
// before its tools/call answer otherwise ("ID" stands for the request's
// ID). Whatever comes, the client does not panic or hang, and the tools it
// offers have valid names and clean descriptions.
func FuzzClientMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":"ID","result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`list:{"jsonrpc":"2.0","id":"ID","result":{"tools":[{"name":"a\u0000b","description":"x\u202ey","inputSchema":{"type":"object"}}]}}`,
	} {
		f.Add([]byte(seed))
	}
	validName := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	f.Fuzz(func(t *testing.T, data []byte) {
		list, isList := bytes.CutPrefix(data, []byte("list:"))
		s := &rawServer{handle: both(
			answer("tools/list", func(c *rawConn, r *rawRequest) {
				if isList {
					c.send(strings.ReplaceAll(string(list), `"ID"`, string(r.ID)))
				}
				c.reply(r.ID, toolList("", "probe"))
			}),
			answer("tools/call", func(c *rawConn, r *rawRequest) {
				if !isList {
					c.send(strings.ReplaceAll(string(data), `"ID"`, string(r.ID)))
				}
				c.reply(r.ID, text("done"))
			}),
		)}
		limits := mcp.Limits{ConnectTimeout: time.Second, ListTimeout: time.Second, CallTimeout: time.Second, MaxDescriptionBytes: 64}
		ts, err := mcp.Connect(t.Context(), s.config(), mcp.WithLimits(limits), mcp.WithRetry(1, 0), mcp.WithLogger(discardLogger))
		if err != nil {
			return
		}
		defer ts.Close()
		tools, err := ts.Tools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools {
			spec := tl.Spec()
			if !validName.MatchString(spec.Name) {
				t.Errorf("tool name %q", spec.Name)
			}
			if d := spec.Description; !utf8.ValidString(d) || len(d) > 64 || strings.ContainsFunc(d, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x202e }) {
				t.Errorf("description %q", d)
			}
			tl.Call(t.Context(), nil) // any outcome but a panic or a hang
		}
	})
}

// discardLogger drops the warnings about a server's tools.
var discardLogger = slog.New(slog.DiscardHandler)
