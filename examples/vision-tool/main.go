// Command vision-tool gives a model a tool that returns an image: a bar
// chart the tool draws as a PNG. The model looks at the chart and
// describes it.
//
//	go run ./examples/vision-tool                                   # offline: a fake Anthropic server answers
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/vision-tool
//	OPENAI_API_KEY=sk-... go run ./examples/vision-tool             # the Responses API
//	GEMINI_API_KEY=... RUNLET_MODEL=gemini-3-pro-preview go run ./examples/vision-tool
//
// The tool returns a runlet.ToolOutput: a caption, the image and the data
// as a structured value. Each adapter sends the image the way its API takes
// it in a tool result (an Anthropic tool_result image block, an OpenAI
// function_call_output input_image, a Gemini 3 functionResponse part); the
// offline server checks that the image it got is the tool's PNG.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

func main() {
	if err := run(context.Background(), os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "vision-tool:", err)
		os.Exit(1)
	}
}

// chartIn is the chart tool's input.
type chartIn struct {
	Title  string `json:"title" jsonschema:"what the chart shows"`
	Values []int  `json:"values" jsonschema:"the bars' heights, 0 to 100, left to right"`
}

// chartTool draws a bar chart and returns it as an image.
func chartTool() runlet.Tool {
	return runlet.NewTool("bar_chart", "Draws a bar chart of the values and returns it as a PNG image.",
		func(ctx context.Context, in chartIn) (runlet.ToolOutput, error) {
			img, err := drawChart(in.Values)
			if err != nil {
				return runlet.ToolOutput{}, err
			}
			return runlet.ToolOutput{
				Parts: []runlet.Part{
					runlet.Text(fmt.Sprintf("A bar chart of %q, %d bars:", in.Title, len(in.Values))),
					runlet.Image("image/png", img),
				},
				Structured: in,
			}, nil
		})
}

// drawChart renders values as blue bars on white, 40 px per bar.
func drawChart(values []int) ([]byte, error) {
	if len(values) == 0 || len(values) > 20 {
		return nil, fmt.Errorf("give 1 to 20 values, not %d", len(values))
	}
	const w, h = 40, 100
	img := image.NewRGBA(image.Rect(0, 0, w*len(values), h))
	for x := range img.Bounds().Dx() {
		for y := range h {
			img.Set(x, y, color.White)
		}
	}
	blue := color.RGBA{R: 40, G: 90, B: 200, A: 255}
	for i, v := range values {
		v = min(max(v, 0), 100)
		for x := i*w + 5; x < (i+1)*w-5; x++ {
			for y := h - v; y < h; y++ {
				img.Set(x, y, blue)
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func run(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	var model runlet.Model
	switch {
	case getenv("ANTHROPIC_API_KEY") != "":
		model = anthropic.NewMessages(anthropic.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "claude-sonnet-4-5")})
	case getenv("OPENAI_API_KEY") != "":
		model = openai.NewResponses(openai.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "gpt-5-mini")})
	case getenv("GEMINI_API_KEY") != "" || getenv("GOOGLE_API_KEY") != "":
		model = gemini.New(gemini.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "gemini-3-pro-preview")})
	default:
		fmt.Fprintln(stderr, "No ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY: a fake Anthropic server answers (offline).")
		srv := offlineServer()
		defer srv.Close()
		model = anthropic.NewMessages(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "offline", Model: "claude-sonnet-4-5"})
	}
	agent := &runlet.Agent{
		Name:         "analyst",
		Instructions: "Draw charts with the bar_chart tool, then describe what you see in the image, in one or two sentences.",
		Model:        model,
		Tools:        []runlet.Tool{chartTool()},
	}
	res, err := runlet.NewRuntime().Run(ctx, agent, "Chart monthly sales of 20, 45, 80 and 60 (January to April) and describe the chart.")
	if err != nil {
		return err
	}
	for _, m := range res.Messages {
		for _, p := range m.Parts {
			if r, ok := p.(runlet.ToolResultPart); ok {
				for _, q := range r.Parts {
					if img, ok := q.(runlet.ImagePart); ok {
						fmt.Fprintf(stderr, "%s returned %s (%d bytes) and %s\n", r.Name, img.MediaType, len(img.Data), r.Structured)
					}
				}
			}
		}
	}
	fmt.Fprintln(stdout, res.Output)
	return nil
}

// offlineServer is a fake Anthropic Messages API: it asks for the chart,
// then describes the image it finds in the tool_result, after checking it
// is a PNG of the size the tool draws.
func offlineServer() *runlettest.AnthropicServer {
	srv := runlettest.NewAnthropicServer()
	srv.SetResponder(func(req runlettest.WireRequest) runlettest.AnthropicResponse {
		img, err := toolResultImage(req.Body)
		switch {
		case err != nil:
			return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("offline server: " + err.Error())}}
		case img == nil: // the first turn: ask for the chart
			return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{
				runlettest.AnthropicToolUse("toolu_1", "bar_chart", `{"title":"Monthly sales","values":[20,45,80,60]}`),
			}}
		}
		b := img.Bounds()
		return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText(fmt.Sprintf(
			"The chart (%dx%d px) shows four blue bars rising from January to a peak in March, then falling in April.", b.Dx(), b.Dy()))}}
	})
	return srv
}

// toolResultImage decodes the PNG in the request's last tool_result, or
// returns nil when there is none.
func toolResultImage(body []byte) (image.Image, error) {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	last := req.Messages[len(req.Messages)-1].Content
	var blocks []struct {
		Type    string `json:"type"`
		Content []struct {
			Type   string `json:"type"`
			Source struct {
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"source"`
		} `json:"content"`
	}
	if json.Unmarshal(last, &blocks) != nil {
		return nil, nil // a plain string: the user's prompt
	}
	for _, bl := range blocks {
		for _, c := range bl.Content {
			if bl.Type == "tool_result" && c.Type == "image" && c.Source.MediaType == "image/png" {
				data, err := base64.StdEncoding.DecodeString(c.Source.Data)
				if err != nil {
					return nil, err
				}
				return png.Decode(bytes.NewReader(data))
			}
		}
	}
	return nil, nil
}
