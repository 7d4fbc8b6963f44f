package runlet_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

var png = []byte("\x89PNG\r\n\x1a\n fake image bytes")

// A result with every kind of part and a structured value survives JSON,
// in a Message and on its own (as in ToolFinished and checkpoints).
func TestToolResultPartsRoundTrip(t *testing.T) {
	res := runlet.ToolResultPart{
		CallID: "c1", Name: "shot", Content: "before after",
		Parts: []runlet.Part{
			runlet.Text("before "),
			runlet.Image("image/png", png),
			runlet.ImageURL("https://example.com/a.png"),
			runlet.File("report.pdf", "application/pdf", []byte("%PDF-1.7")),
			runlet.Audio("audio/wav", []byte("RIFF....WAVE")),
			runlet.Text("after"),
		},
		Structured: json.RawMessage(`{"w":640,"h":480}`),
	}
	msg := runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{res}}
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	var back runlet.Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, msg) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", back, msg)
	}
	for _, want := range []string{`"type":"image"`, `"type":"audio"`, `"type":"file"`, `"structured":{"w":640,"h":480}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	// on its own
	b, err = json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var alone runlet.ToolResultPart
	if err := json.Unmarshal(b, &alone); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(alone, res) {
		t.Fatalf("alone:\n got %#v\nwant %#v", alone, res)
	}
	// a text-only result is written as before: no parts, no structured
	b, _ = json.Marshal(runlet.ToolResultPart{CallID: "c", Content: "x"})
	if string(b) != `{"type":"tool_result","call_id":"c","content":"x"}` {
		t.Errorf("text-only result = %s", b)
	}
	// structured JSON that is not valid still round-trips
	bad := runlet.ToolResultPart{CallID: "c", Structured: json.RawMessage(`{"cut`)}
	b, err = json.Marshal(bad)
	if err != nil {
		t.Fatal(err)
	}
	alone = runlet.ToolResultPart{}
	if err := json.Unmarshal(b, &alone); err != nil || string(alone.Structured) != `{"cut` {
		t.Errorf("invalid structured: %s -> %q, %v", b, alone.Structured, err)
	}
}

// A tool result holds text, images, files and audio only.
func TestToolResultRefusesOtherParts(t *testing.T) {
	var m runlet.Message
	err := json.Unmarshal([]byte(`{"role":"tool","parts":[{"type":"tool_result","call_id":"c","content":"","parts":[{"type":"tool_call","id":"x","name":"y"}]}]}`), &m)
	if err == nil || !strings.Contains(err.Error(), "cannot be in a tool result") {
		t.Fatalf("err = %v", err)
	}
}

func shotTool(out runlet.ToolOutput) runlet.Tool {
	return runlet.NewTool("shot", "Takes a screenshot.", func(ctx context.Context, _ struct{}) (runlet.ToolOutput, error) {
		return out, nil
	})
}

func runOneCall(t *testing.T, tool runlet.Tool, opts ...runlet.RunOption) (runlet.ToolResultPart, *runlet.ToolFinished, *runlet.ModelRequest) {
	t.Helper()
	return runCallWith(t, tool, `{}`, opts...)
}

func runCallWith(t *testing.T, tool runlet.Tool, args string, opts ...runlet.RunOption) (runlet.ToolResultPart, *runlet.ToolFinished, *runlet.ModelRequest) {
	t.Helper()
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", tool.Spec().Name, args)), runlettest.TextReply("done"))
	var finished *runlet.ToolFinished
	obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
		if f, ok := ev.(*runlet.ToolFinished); ok {
			finished = f
		}
	})
	rt := runlet.NewRuntime(runlet.WithObservers(obs))
	res, err := rt.Run(t.Context(), &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}, "go", opts...)
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	return res.Messages[2].Parts[0].(runlet.ToolResultPart), finished, reqs[len(reqs)-1]
}

// A Go tool returns parts and a structured value; the result, the
// ToolFinished event and the next model request carry them, in order.
func TestToolReturnsParts(t *testing.T) {
	out := runlet.ToolOutput{
		Parts:      []runlet.Part{runlet.Text("the screen:"), runlet.Image("image/png", png), runlet.Text(" ok")},
		Structured: map[string]int{"w": 640},
	}
	got, ev, req := runOneCall(t, shotTool(out))
	want := runlet.ToolResultPart{CallID: "c1", Name: "shot", Content: "the screen: ok", Parts: out.Parts, Structured: json.RawMessage(`{"w":640}`)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("result:\n got %#v\nwant %#v", got, want)
	}
	if ev == nil || !reflect.DeepEqual(ev.Result, want) {
		t.Errorf("ToolFinished = %#v", ev)
	}
	sent := req.Messages[len(req.Messages)-1].Parts[0].(runlet.ToolResultPart)
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("sent to the model: %#v", sent)
	}
}

// Text parts alone make a text-only result (Parts nil), and a structured
// value alone is also the result's text.
func TestToolOutputTextOnlyAndStructured(t *testing.T) {
	got, _, _ := runOneCall(t, shotTool(runlet.Output(runlet.Text("a"), runlet.Text("b"))))
	if got.Content != "ab" || got.Parts != nil || got.Structured != nil {
		t.Errorf("text only: %#v", got)
	}
	got, _, _ = runOneCall(t, shotTool(runlet.StructuredOutput(json.RawMessage(`{"ok":true}`))))
	if got.Content != `{"ok":true}` || got.Parts != nil || string(got.Structured) != `{"ok":true}` {
		t.Errorf("structured: %#v", got)
	}
}

// An output that is not well formed is an is-error result, not a panic or
// a part a provider would reject later.
func TestToolOutputInvalid(t *testing.T) {
	for name, out := range map[string]runlet.ToolOutput{
		"no media type":     runlet.Output(runlet.ImagePart{Data: png}),
		"empty image":       runlet.Output(runlet.ImagePart{}),
		"nil part":          runlet.Output(nil),
		"reasoning":         runlet.Output(runlet.ReasoningPart{Text: "x"}),
		"unencodable value": runlet.StructuredOutput(func() {}),
		"invalid raw JSON":  runlet.StructuredOutput(json.RawMessage(`{`)),
	} {
		t.Run(name, func(t *testing.T) {
			got, ev, _ := runOneCall(t, shotTool(out))
			if !got.IsError || got.Parts != nil || !strings.HasPrefix(got.Content, "Error: the tool's ") || ev.ErrorKind != runlet.ToolFailed {
				t.Errorf("got %#v, kind %q", got, ev.ErrorKind)
			}
		})
	}
}

// Media counts against the output cap and is never cut: too large, it is
// an is-error result saying why; the text is cut to the room left.
func TestToolOutputCap(t *testing.T) {
	big := make([]byte, 5000)
	got, ev, _ := runOneCall(t, shotTool(runlet.Output(runlet.Image("image/png", big))), runlet.WithMaxToolOutput(4096))
	if !got.IsError || got.Parts != nil || ev.ErrorKind != runlet.ToolOutputTooLarge ||
		!strings.Contains(got.Content, "image image/png of 5000 bytes") || !strings.Contains(got.Content, "4096-byte limit") {
		t.Errorf("oversized image: %#v, kind %q", got, ev.ErrorKind)
	}
	text := strings.Repeat("x", 3000)
	got, _, _ = runOneCall(t, shotTool(runlet.Output(runlet.Text(text), runlet.Image("image/png", big[:2000]), runlet.Text("tail"))), runlet.WithMaxToolOutput(4096))
	if got.IsError || len(got.Parts) != 2 || !reflect.DeepEqual(got.Parts[1], runlet.Image("image/png", big[:2000])) {
		t.Fatalf("cut text: %#v", got)
	}
	first := got.Parts[0].(runlet.TextPart).Text
	if !strings.HasPrefix(first, strings.Repeat("x", 2096)+"\n[output truncated: showing 2096 of 3004 bytes of text]") || got.Content != first {
		t.Errorf("cut text = %q", first)
	}
	// Unset, the cap leaves 20 MiB to media, apart from the text's 64 KiB.
	got, _, _ = runOneCall(t, shotTool(runlet.Output(runlet.Image("image/png", make([]byte, 1<<20)))))
	if got.IsError {
		t.Errorf("a 1 MiB image under the default cap: %s", got.Content)
	}
	got, ev, _ = runOneCall(t, shotTool(runlet.Output(runlet.Image("image/png", make([]byte, 21<<20)))))
	if !got.IsError || ev.ErrorKind != runlet.ToolOutputTooLarge {
		t.Errorf("a 21 MiB image under the default cap: %.200s", got.Content)
	}
}

// partsTool is a hand-written Tool returning parts.
type partsTool struct{}

func (partsTool) Spec() runlet.ToolSpec {
	return runlet.ToolSpec{Name: "pt", InputSchema: runlet.SchemaFor[struct{}]()}
}
func (partsTool) Call(context.Context, json.RawMessage) (string, error) {
	return "", errors.New("call CallParts")
}
func (partsTool) CallParts(context.Context, json.RawMessage) (runlet.ToolOutput, error) {
	return runlet.Output(runlet.Text("see"), runlet.File("a.pdf", "application/pdf", []byte("%PDF"))), nil
}

func TestPartsToolIsCalledForParts(t *testing.T) {
	got, _, _ := runOneCall(t, partsTool{})
	if got.IsError || got.Content != "see" || len(got.Parts) != 2 {
		t.Fatalf("got %#v", got)
	}
	rt := runlet.NewRuntime()
	res, kind := rt.CallTool(t.Context(), partsTool{}, runlet.ToolCallPart{ID: "x", Arguments: json.RawMessage(`{}`)})
	if kind != "" || len(res.Parts) != 2 {
		t.Errorf("CallTool = %#v, %q", res, kind)
	}
	// A tool made by NewTool is a PartsTool; its Call gives the text.
	tool := shotTool(runlet.Output(runlet.Text("t"), runlet.Image("image/png", png)))
	o, err := runlet.CallParts(t.Context(), tool, json.RawMessage(`{}`))
	if err != nil || len(o.Parts) != 2 {
		t.Errorf("CallParts = %#v, %v", o, err)
	}
	if s, err := tool.Call(t.Context(), json.RawMessage(`{}`)); s != "t" || err != nil {
		t.Errorf("Call = %q, %v", s, err)
	}
}

// An agent called as a tool passes the images of its answer to its caller.
func TestAgentToolPassesAnswerParts(t *testing.T) {
	answer := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.TextPart{Text: "here:", ItemID: "msg_1", Provider: "openai"}, runlet.Image("image/png", png),
	}}
	inner := runlettest.NewModel(runlettest.Reply{Response: &runlet.ModelResponse{Message: answer, FinishReason: runlet.FinishStop}})
	painter := &runlet.Agent{Name: "painter", Model: inner}
	got, _, _ := runCallWith(t, painter.AsTool(), `{"input":"paint"}`)
	want := []runlet.Part{runlet.Text("here:"), runlet.Image("image/png", png)}
	if got.IsError || got.Content != "here:" || !reflect.DeepEqual(got.Parts, want) {
		t.Fatalf("got %#v", got)
	}
	// outside a run, too
	inner.Push(runlettest.Reply{Response: &runlet.ModelResponse{Message: answer, FinishReason: runlet.FinishStop}})
	o, err := runlet.CallParts(t.Context(), painter.AsTool(), json.RawMessage(`{"input":"paint"}`))
	if err != nil || !reflect.DeepEqual(o.Parts, want) {
		t.Errorf("CallParts = %#v, %v", o, err)
	}
}

// RunAs decodes the answer's text and ignores its other parts.
func TestRunAsIgnoresNonTextParts(t *testing.T) {
	answer := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.Image("image/png", png), runlet.Text(`{"n":`), runlet.Audio("audio/wav", []byte("RIFF")), runlet.Text(`7}`),
	}}
	model := runlettest.NewModel(runlettest.Reply{Response: &runlet.ModelResponse{Message: answer, FinishReason: runlet.FinishStop}})
	res, err := runlet.RunAs[struct {
		N int `json:"n"`
	}](t.Context(), runlet.NewRuntime(), &runlet.Agent{Model: model}, "count", runlet.WithOutputMode(runlet.OutputPrompted))
	if err != nil || res.Value.N != 7 {
		t.Fatalf("RunAs = %+v, %v", res, err)
	}
}

// The memory store keeps its own copy of a result's parts, and an
// observer gets its own copy in ToolFinished: changing theirs changes
// nothing else.
func TestToolResultPartsAreCopied(t *testing.T) {
	data := []byte("\x89PNG original")
	res := runlet.ToolResultPart{CallID: "c", Content: "x", Parts: []runlet.Part{runlet.Text("x"), runlet.Image("image/png", data), runlet.Audio("audio/wav", data)}}
	store := runlet.NewMemoryStore()
	if err := store.AppendSession(t.Context(), "s", 0, []runlet.Message{{Role: runlet.RoleTool, Parts: []runlet.Part{res}}}); err != nil {
		t.Fatal(err)
	}
	data[0] = 'X'
	res.Parts[0] = runlet.Text("changed")
	msgs, err := store.LoadSession(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	kept := msgs[0].Parts[0].(runlet.ToolResultPart)
	if kept.Parts[0].(runlet.TextPart).Text != "x" || kept.Parts[1].(runlet.ImagePart).Data[0] != 0x89 || kept.Parts[2].(runlet.AudioPart).Data[0] != 0x89 {
		t.Errorf("the store's copy changed: %#v", kept)
	}

	out := runlet.Output(runlet.Text("t"), runlet.Image("image/png", []byte("\x89PNG")))
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "shot", `{}`)), runlettest.TextReply("done"))
	meddler := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
		if ev, ok := ev.(*runlet.ToolFinished); ok {
			ev.Result.Parts[1].(runlet.ImagePart).Data[0] = 'X'
			ev.Result.Parts[0] = runlet.Text("changed")
		}
	})
	final, err := runlet.NewRuntime(runlet.WithObservers(meddler)).Run(t.Context(), &runlet.Agent{Model: model, Tools: []runlet.Tool{shotTool(out)}}, "go")
	if err != nil {
		t.Fatal(err)
	}
	got := final.Messages[2].Parts[0].(runlet.ToolResultPart)
	if got.Parts[0].(runlet.TextPart).Text != "t" || got.Parts[1].(runlet.ImagePart).Data[0] != 0x89 {
		t.Errorf("an observer's change reached the run: %#v", got)
	}
}

// The JSONL observer writes a tool result's image (and the same image in
// the next request's history) as a summary, never as base64; the slog
// observer names the media.
func TestObserversSummarizeMedia(t *testing.T) {
	img := []byte(strings.Repeat("\x89PNG-pixels-", 100))
	var jsonl, logs strings.Builder
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "shot", `{}`)), runlettest.TextReply("done"))
	rt := runlet.NewRuntime(runlet.WithObservers(runlet.NewJSONLObserver(&jsonl), runlet.NewSlogObserver(slog.New(slog.NewTextHandler(&logs, nil)))))
	if _, err := rt.Run(t.Context(), &runlet.Agent{Model: model, Tools: []runlet.Tool{shotTool(runlet.Output(runlet.Text("t"), runlet.Image("image/png", img)))}}, "go"); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(img)
	if strings.Contains(jsonl.String(), b64[:40]) {
		t.Fatal("the JSONL log holds the image's bytes")
	}
	sum := sha256.Sum256(img)
	want := `{"type":"image","media_type":"image/png","bytes":1200,"sha256":"` + hex.EncodeToString(sum[:]) + `"}`
	// in tool.finished, the next model.started and run.finished
	if n := strings.Count(jsonl.String(), want); n < 3 {
		t.Errorf("%d summaries %s in:\n%.2000s", n, want, jsonl.String())
	}
	if !strings.Contains(logs.String(), `media="image image/png 1200 bytes"`) {
		t.Errorf("slog:\n%s", logs.String())
	}
}

// A guardrail that rejects a result, or a hook that rewrites its text,
// decides what the model sees: the original parts do not ride along.
func TestRejectedOrEditedResultDropsParts(t *testing.T) {
	secret := runlet.Output(runlet.Text("secret text"), runlet.Image("image/png", png))
	agent := func(model runlet.Model) *runlet.Agent {
		return &runlet.Agent{Model: model, Tools: []runlet.Tool{shotTool(secret)}}
	}
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "shot", `{}`)), runlettest.TextReply("done"))
	a := agent(model)
	a.Guardrails = []runlet.Guardrail{{Name: "no_images", ToolResult: func(ctx context.Context, _ runlet.ToolCallPart, res runlet.ToolResultPart) (runlet.GuardrailVerdict, error) {
		if len(res.Parts) > 1 {
			return runlet.RejectCall("no screenshots"), nil
		}
		return runlet.GuardrailVerdict{}, nil
	}}}
	if _, err := runlet.NewRuntime().Run(t.Context(), a, "go"); err != nil {
		t.Fatal(err)
	}
	sent := model.Requests()[1].Messages[2].Parts[0].(runlet.ToolResultPart)
	if !sent.IsError || sent.Parts != nil || sent.Structured != nil || strings.Contains(sent.Content, "secret") {
		t.Errorf("rejected result sent as %#v", sent)
	}

	model = runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "shot", `{}`)), runlettest.TextReply("done"))
	redact := runlet.Hooks{AfterToolCall: func(ctx context.Context, _ runlet.ToolCallPart, res *runlet.ToolResultPart) error {
		res.Content = strings.ReplaceAll(res.Content, "secret", "[redacted]")
		return nil
	}}
	if _, err := runlet.NewRuntime(runlet.WithHooks(redact)).Run(t.Context(), agent(model), "go"); err != nil {
		t.Fatal(err)
	}
	sent = model.Requests()[1].Messages[2].Parts[0].(runlet.ToolResultPart)
	want := []runlet.Part{runlet.Text("[redacted] text"), runlet.Image("image/png", png)}
	if sent.Content != "[redacted] text" || !reflect.DeepEqual(sent.Parts, want) {
		t.Errorf("redacted result sent as %#v", sent)
	}
}
