package runlettest_test

import (
	"context"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func ExampleModel() {
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "echo", `{"text":"hi"}`)),
		runlettest.TextReply("The tool said hi."),
	)
	echo := runlet.NewTool("echo", "Echoes text.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{echo}}, "Say hi via the tool.")
	fmt.Println(res.Output, err)

	// Every request is recorded, so a test can assert what the model saw.
	second := model.Requests()[1]
	fmt.Println(len(second.Messages), second.Messages[2].Parts[0].(runlet.ToolResultPart).Content)
	// Output:
	// The tool said hi. <nil>
	// 3 hi
}
