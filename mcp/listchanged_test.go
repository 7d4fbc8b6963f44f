package mcp_test

import (
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/runlettest"
)

// A server that sends notifications/tools/list_changed before a tool's
// result: the model call right after the result sees the new list, every
// time (the SDK hands the notification to its handler on another
// goroutine, which used to lose the race about 4 times in 10).
func TestToolsetListChangedBeforeResult(t *testing.T) {
	for _, transport := range []string{"stdio", "streamable HTTP"} {
		t.Run(transport, func(t *testing.T) {
			for i := range 50 {
				var installed atomic.Bool
				s := &rawServer{handle: func(c *rawConn, r *rawRequest) bool {
					switch r.Method {
					case "tools/list":
						if installed.Load() {
							c.reply(r.ID, toolList("", "install", "extra"))
						} else {
							c.reply(r.ID, toolList("", "install"))
						}
					case "tools/call":
						installed.Store(true)
						c.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
						c.reply(r.ID, text("installed"))
					default:
						return false
					}
					return true
				}}
				cfg := s.config()
				if transport != "stdio" {
					hs := httptest.NewServer(s)
					defer hs.Close()
					cfg = mcp.ServerConfig{Name: "raw", URL: hs.URL}
				}
				ts := connectToolset(t, cfg, mcp.WithPrefix("t_"))
				model := runlettest.NewModel(
					runlettest.ToolCallReply(runlettest.Call("1", "t_install", `{}`)),
					runlettest.TextReply("done"),
				)
				agent := &runlet.Agent{Model: model, Toolsets: []runlet.Toolset{ts}}
				if _, err := runlet.NewRuntime().Run(t.Context(), agent, "install"); err != nil {
					t.Fatal(err)
				}
				if got := specs(model.Requests()[1].Tools); !strings.Contains(got, "t_extra") {
					t.Fatalf("run %d: the model call after the result saw %s, want t_extra", i, got)
				}
				ts.Close()
			}
		})
	}
}
