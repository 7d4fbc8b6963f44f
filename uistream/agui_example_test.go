package uistream_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/uistream"
)

// An AG-UI client (@ag-ui/client's HttpAgent, CopilotKit) posts a
// RunAgentInput and reads the run as AG-UI events.
func ExampleNewAGUIHandler() {
	agent := &runlet.Agent{Name: "assistant", Model: runlettest.NewModel(runlettest.TextReply("Hello!"))}
	srv := httptest.NewServer(uistream.NewAGUIHandler(uistream.Options{Runtime: runlet.NewRuntime(), Agent: agent}))
	defer srv.Close()

	input := `{"threadId":"thread-1","runId":"run-1","messages":[{"id":"m1","role":"user","content":"Hi"}]}`
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(input))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev struct {
				Type  string `json:"type"`
				Delta string `json:"delta"`
				Name  string `json:"name"`
			}
			_ = json.Unmarshal([]byte(data), &ev)
			fmt.Println(strings.TrimSpace(ev.Type + " " + ev.Delta + ev.Name))
		}
	}
	// Output:
	// RUN_STARTED
	// STEP_STARTED
	// TEXT_MESSAGE_START assistant
	// TEXT_MESSAGE_CONTENT Hello!
	// TEXT_MESSAGE_END
	// CUSTOM runlet.usage
	// STEP_FINISHED
	// RUN_FINISHED
}
