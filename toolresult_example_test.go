package runlet_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A tool returns an image with its caption and a structured value by
// returning a runlet.ToolOutput; the model receives every part.
func ExampleToolOutput() {
	chart := []byte("\x89PNG\r\n\x1a\n...") // a PNG the tool rendered
	plot := runlet.NewTool("plot", "Plots the sales of a year as a PNG chart.",
		func(ctx context.Context, in struct {
			Year int `json:"year"`
		}) (runlet.ToolOutput, error) {
			return runlet.ToolOutput{
				Parts: []runlet.Part{
					runlet.Text(fmt.Sprintf("Sales in %d:", in.Year)),
					runlet.Image("image/png", chart),
				},
				Structured: map[string]int{"year": in.Year, "total": 1200},
			}, nil
		})
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "plot", `{"year":2025}`)),
		runlettest.TextReply("Sales rose all year."),
	)
	res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{plot}}, "How did sales go?")
	if err != nil {
		panic(err)
	}
	r := res.Messages[2].Parts[0].(runlet.ToolResultPart)
	fmt.Println("text:", r.Content)
	for _, p := range r.Parts {
		if img, ok := p.(runlet.ImagePart); ok {
			fmt.Println("image:", img.MediaType, len(img.Data), "bytes")
		}
	}
	fmt.Println("structured:", string(r.Structured))
	// Output:
	// text: Sales in 2025:
	// image: image/png 11 bytes
	// structured: {"total":1200,"year":2025}
}

// screenshot is a hand-written Tool that returns parts: it implements
// runlet.PartsTool, and a run calls its CallParts.
type screenshot struct{}

func (screenshot) Spec() runlet.ToolSpec {
	return runlet.ToolSpec{Name: "screenshot", Description: "Captures the screen.", InputSchema: runlet.SchemaFor[struct{}]()}
}

// Call gives the text of the output, for callers that want text only.
func (s screenshot) Call(ctx context.Context, args json.RawMessage) (string, error) {
	return "the screen, as a PNG", nil
}

func (screenshot) CallParts(ctx context.Context, args json.RawMessage) (runlet.ToolOutput, error) {
	return runlet.Output(
		runlet.Text("the screen, as a PNG"),
		runlet.Image("image/png", []byte("\x89PNG...")),
		runlet.ImageURL("https://example.com/previous.png"),
		runlet.File("log.txt", "text/plain", []byte("boot ok")),
		runlet.Audio("audio/wav", []byte("RIFF....WAVE")),
	), nil
}

var _ runlet.PartsTool = screenshot{}

func ExamplePartsTool() {
	out, err := runlet.CallParts(context.Background(), screenshot{}, json.RawMessage(`{}`))
	if err != nil {
		panic(err)
	}
	for _, p := range out.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			fmt.Println("text", p.Text)
		case runlet.ImagePart:
			fmt.Println("image", p.MediaType+p.URL)
		case runlet.FilePart:
			fmt.Println("file", p.Name)
		case runlet.AudioPart:
			fmt.Println("audio", p.MediaType)
		}
	}
	// A structured value alone is also the result's text.
	_ = runlet.StructuredOutput(map[string]bool{"ok": true})
	// Output:
	// text the screen, as a PNG
	// image image/png
	// image https://example.com/previous.png
	// file log.txt
	// audio audio/wav
}
