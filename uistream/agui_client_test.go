package uistream_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/nodetest"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/uistream"
)

// aguiClientRun is one run as AG-UI's client saw it.
type aguiClientRun struct {
	Types []string `json:"types"`
	Error string   `json:"error"`
}

type aguiClientSummary struct {
	aguiClientRun
	First      aguiClientRun `json:"first"`
	Second     aguiClientRun `json:"second"`
	Interrupts []struct {
		ID         string `json:"id"`
		Reason     string `json:"reason"`
		ToolCallID string `json:"toolCallId"`
	} `json:"interrupts"`
	PendingAfter int `json:"pendingAfter"`
	Messages     []struct {
		ID        string `json:"id"`
		Role      string `json:"role"`
		Content   any    `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"toolCalls"`
		ToolCallID    string `json:"toolCallId"`
		SubagentRunID string `json:"subagentRunId"`
	} `json:"messages"`
	State    map[string]any `json:"state"`
	Checked  int            `json:"checked"`  // events validated against the schemas
	Comments int            `json:"comments"` // keep-alive comments seen`
}

func runAGUIClient(t *testing.T, url, scenario string) aguiClientSummary {
	t.Helper()
	nodetest.Project(t, "@ag-ui/client", "@ag-ui/core")
	out := nodetest.Run(t, "agui-client.mjs", nil, url, scenario)
	var s aguiClientSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("summary %s: %v", out, err)
	}
	if s.Checked == 0 {
		t.Fatalf("no event was checked against the schemas: %s", out)
	}
	return s
}

// TestAGUIClient runs the handler under @ag-ui/client's HttpAgent (its
// verifier and enforcement stage, which fail the script on any event out
// of order or holding what the protocol does not describe), every event
// validated against @ag-ui/core's schemas: a run with reasoning, text and
// a tool call, an approval answered through AG-UI's interrupts and
// resume (also of a call inside an agent called as a tool), shared state,
// a failure, and a sub-agent.
func TestAGUIClient(t *testing.T) {
	t.Run("chat", func(t *testing.T) {
		first := reasoningCall("The user wants weather.", runlettest.Call("call_1", "get_weather", `{"city":"Paris"}`))
		first.Response.Message.Parts = slices.Insert(first.Response.Message.Parts, 1, runlet.Part(runlet.TextPart{Text: "Let me look."}))
		m := runlettest.NewModel(first, runlettest.TextReply("Sunny in Paris."))
		m.ChunkSize = 3
		srv := aguiServer(t, uistream.Options{Runtime: runlet.NewRuntime(), Agent: aguiAgent(m)})
		s := runAGUIClient(t, srv.URL, "chat")
		if s.Error != "" || s.Types[0] != "RUN_STARTED" || s.Types[len(s.Types)-1] != "RUN_FINISHED" {
			t.Fatalf("run: %v %q", s.Types, s.Error)
		}
		for _, want := range []string{"REASONING_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS", "TOOL_CALL_RESULT", "STEP_STARTED", "CUSTOM"} {
			if !slices.Contains(s.Types, want) {
				t.Errorf("no %s: %v", want, s.Types)
			}
		}
		// The client's conversation: the user's question, the reasoning,
		// the answer with its call, the call's result, the final answer.
		var roles []string
		for _, msg := range s.Messages {
			roles = append(roles, msg.Role)
		}
		if want := []string{"user", "reasoning", "assistant", "tool", "assistant"}; !slices.Equal(roles, want) {
			t.Fatalf("client messages %v, want roles %v", roles, want)
		}
		call := s.Messages[2]
		if call.Content != "Let me look." || len(call.ToolCalls) != 1 || call.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
			t.Errorf("assistant message %+v", call)
		}
		if s.Messages[3].ToolCallID != "call_1" || s.Messages[3].Content != "sunny in Paris" || s.Messages[4].Content != "Sunny in Paris." {
			t.Errorf("tool result and answer %+v", s.Messages[3:])
		}
	})

	t.Run("two-turns", func(t *testing.T) {
		first := reasoningCall("The user wants weather.", runlettest.Call("call_1", "get_weather", `{"city":"Paris"}`))
		m := runlettest.NewModel(first, runlettest.TextReply("Sunny in Paris."), runlettest.TextReply("Rain tomorrow."))
		srv := aguiServer(t, uistream.Options{Runtime: runlet.NewRuntime(), Agent: aguiAgent(m)})
		s := runAGUIClient(t, srv.URL, "two-turns")
		if s.First.Error != "" || s.Second.Error != "" {
			t.Fatalf("runs failed: %q, %q", s.First.Error, s.Second.Error)
		}
		// The third model request holds the conversation the client sent
		// back: question, call, result, answer, new question (the
		// client's reasoning message is left out).
		got := m.Requests()[2].Messages
		var shape []string
		for _, msg := range got {
			shape = append(shape, string(msg.Role))
		}
		if want := []string{"user", "assistant", "tool", "assistant", "user"}; !slices.Equal(shape, want) {
			t.Fatalf("history roles %v, want %v", shape, want)
		}
		calls := got[1].ToolCalls()
		res, _ := got[2].Parts[0].(runlet.ToolResultPart)
		if len(calls) != 1 || calls[0].ID != "call_1" || string(calls[0].Arguments) != `{"city":"Paris"}` ||
			res.CallID != "call_1" || res.Name != "get_weather" || res.Content != "sunny in Paris" {
			t.Errorf("history call %+v, result %+v", calls, res)
		}
		if got[3].Text() != "Sunny in Paris." || got[4].Text() != "And tomorrow?" {
			t.Errorf("history %v", got)
		}
	})

	t.Run("approval", func(t *testing.T) {
		store := runlet.NewMemoryStore()
		m := runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("call_1", "delete_file", `{"path":"/tmp/a"}`)),
			runlettest.TextReply("Deleted."),
		)
		srv := aguiServer(t, uistream.Options{Runtime: runlet.NewRuntime(runlet.WithStore(store)), Agent: aguiAgent(m), Checkpoints: store})
		s := runAGUIClient(t, srv.URL, "approval")
		if s.First.Error != "" || s.Second.Error != "" {
			t.Fatalf("runs failed: %q, %q", s.First.Error, s.Second.Error)
		}
		if len(s.Interrupts) != 1 || s.Interrupts[0].ToolCallID != "call_1" || s.Interrupts[0].Reason != "tool_call" {
			t.Fatalf("interrupts %+v", s.Interrupts)
		}
		if !slices.Contains(s.Second.Types, "TOOL_CALL_RESULT") || s.PendingAfter != 0 {
			t.Fatalf("resumed run %v, %d interrupts left", s.Second.Types, s.PendingAfter)
		}
		last := s.Messages[len(s.Messages)-1]
		if last.Content != "Deleted." {
			t.Errorf("last message %+v", last)
		}
		// The page's edit reached the tool.
		found := false
		for _, msg := range s.Messages {
			if msg.Role == "tool" && msg.Content == "deleted /tmp/b" {
				found = true
			}
		}
		if !found {
			t.Errorf("no result of the edited call: %+v", s.Messages)
		}
	})

	t.Run("nested-approval", func(t *testing.T) {
		store := runlet.NewMemoryStore()
		janitor := aguiAgent(runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("call_d", "delete_file", `{"path":"/tmp/a"}`)),
			runlettest.TextReply("Deleted it."),
		))
		janitor.Name = "janitor"
		m := runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("call_j", "janitor", `{"input":"delete /tmp/a"}`)),
			runlettest.TextReply("The janitor deleted it."),
		)
		agent := &runlet.Agent{Name: "assistant", Model: m, Tools: []runlet.Tool{janitor.AsTool()}}
		srv := aguiServer(t, uistream.Options{Runtime: runlet.NewRuntime(runlet.WithStore(store)), Agent: agent, Checkpoints: store})
		s := runAGUIClient(t, srv.URL, "nested-approval")
		if s.First.Error != "" || s.Second.Error != "" {
			t.Fatalf("runs failed: %q, %q", s.First.Error, s.Second.Error)
		}
		if len(s.Interrupts) != 1 || s.Interrupts[0].ToolCallID != "call_d" || s.PendingAfter != 0 {
			t.Fatalf("interrupts %+v, %d left", s.Interrupts, s.PendingAfter)
		}
		if last := s.Messages[len(s.Messages)-1]; last.Content != "The janitor deleted it." {
			t.Errorf("last message %+v", last)
		}
	})

	t.Run("frontend-tool", func(t *testing.T) {
		store := runlet.NewMemoryStore()
		m := runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("call_f", "confirm_booking", `{"hotel":"Ritz"}`)),
			runlettest.TextReply("Booked."),
		)
		srv := aguiServer(t, uistream.Options{Runtime: runlet.NewRuntime(runlet.WithStore(store)), Agent: aguiAgent(m), Checkpoints: store})
		s := runAGUIClient(t, srv.URL, "frontend-tool")
		if s.First.Error != "" || s.Second.Error != "" {
			t.Fatalf("runs failed: %q, %q", s.First.Error, s.Second.Error)
		}
		// The page has the result it sent: no run sends it again.
		if slices.Contains(s.First.Types, "TOOL_CALL_RESULT") || slices.Contains(s.Second.Types, "TOOL_CALL_RESULT") {
			t.Fatalf("runs %v, %v", s.First.Types, s.Second.Types)
		}
		results := 0
		for _, msg := range s.Messages {
			if msg.Role == "tool" {
				results++
			}
		}
		if results != 1 {
			t.Errorf("%d tool messages in the client's conversation: %+v", results, s.Messages)
		}
		if last := s.Messages[len(s.Messages)-1]; last.Content != "Booked." {
			t.Errorf("last message %+v", last)
		}
	})

	t.Run("state", func(t *testing.T) {
		store := runlet.NewMemoryStore()
		m := runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("call_1", "add_to_cart", `{"item":"eggs"}`)),
			runlettest.TextReply("Added."),
		)
		srv := aguiServer(t, uistream.Options{
			Runtime: runlet.NewRuntime(runlet.WithStore(store)), Agent: aguiAgent(m),
			Session: func(r *http.Request, chatID string) (string, error) { return chatID, nil },
		}, uistream.AGUIState{Store: store, Keys: []string{"cart"}})
		s := runAGUIClient(t, srv.URL, "state")
		if got, _ := json.Marshal(s.State); string(got) != `{"cart":["milk","eggs"]}` {
			t.Errorf("client state %s (events %v)", got, s.Types)
		}
	})

	t.Run("error", func(t *testing.T) {
		m := runlettest.NewModel(runlettest.ErrorReply(errors.New("dial tcp 10.0.0.7:5432: key sk-live-123 refused")))
		srv := aguiServer(t, uistream.Options{Runtime: runlet.NewRuntime(), Agent: aguiAgent(m)})
		s := runAGUIClient(t, srv.URL, "error")
		if s.Types[len(s.Types)-1] != "RUN_ERROR" || s.Error == "" {
			t.Fatalf("run: %v %q", s.Types, s.Error)
		}
		if strings.Contains(s.Error, "sk-live") || strings.Contains(s.Error, "10.0.0.7") {
			t.Errorf("the client saw the error's own text: %q", s.Error)
		}
	})

	t.Run("parts", func(t *testing.T) {
		chart := runlet.NewTool("chart", "Draw a chart.", func(ctx context.Context, in struct{}) (runlet.ToolOutput, error) {
			return runlet.ToolOutput{Parts: []runlet.Part{runlet.Text("Here:"), runlet.Image("image/png", []byte("PNG")),
				runlet.File("r.pdf", "application/pdf", []byte("PDF")), runlet.Audio("audio/wav", []byte("WAV"))}, Structured: []int{1, 2}}, nil
		})
		answer := runlettest.TextReply("Sunny.")
		answer.Response.Message.Parts = []runlet.Part{
			runlet.HostedToolPart{ID: "srv_1", Kind: runlet.HostedWebSearch, Name: "web_search", Input: json.RawMessage(`{"query":"paris"}`)},
			runlet.TextPart{Text: "Sunny.", Citations: []runlet.Citation{{URL: "https://w.test", Title: "Weather"}}},
		}
		m := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("call_1", "chart", `{}`)), answer)
		agent := &runlet.Agent{Name: "assistant", Model: m, Tools: []runlet.Tool{chart}}
		srv := aguiServer(t, uistream.Options{Runtime: runlet.NewRuntime(), Agent: agent})
		s := runAGUIClient(t, srv.URL, "parts")
		if s.Error != "" {
			t.Fatalf("run: %v %q", s.Types, s.Error)
		}
		for _, msg := range s.Messages {
			if msg.Role == "tool" {
				if parts, _ := msg.Content.([]any); len(parts) != 4 {
					t.Errorf("tool message content %v", msg.Content)
				}
			}
		}
	})

	t.Run("subagent", func(t *testing.T) {
		researcher := &runlet.Agent{Name: "researcher", Model: runlettest.NewModel(runlettest.TextReply("Paris is sunny."))}
		m := runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("call_r", "researcher", `{"input":"weather in Paris"}`)),
			runlettest.TextReply("It is sunny."),
		)
		agent := &runlet.Agent{Name: "assistant", Model: m, Tools: []runlet.Tool{researcher.AsTool()}}
		srv := aguiServer(t, uistream.Options{Runtime: runlet.NewRuntime(), Agent: agent})
		s := runAGUIClient(t, srv.URL, "subagent")
		if s.Error != "" || !slices.Contains(s.Types, "SUBAGENT_STARTED") || !slices.Contains(s.Types, "SUBAGENT_FINISHED") {
			t.Fatalf("run: %v %q", s.Types, s.Error)
		}
		var sub int
		for _, msg := range s.Messages {
			if msg.SubagentRunID == "call_r" {
				sub++
			}
		}
		if sub == 0 {
			t.Errorf("no message attributed to the sub-agent: %+v", s.Messages)
		}
	})
}
