package runlettest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/demo"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
	"go.uber.org/goleak"
)

type capitalArgs struct {
	Country string `json:"country"`
}

func capitalTool() runlet.Tool {
	return runlet.NewTool("get_capital", "Returns the capital of a country.",
		func(_ context.Context, in capitalArgs) (string, error) {
			if strings.EqualFold(in.Country, "UK") {
				return "London", nil
			}
			return "", errors.New("unknown country")
		})
}

// runAgent streams one run of a get_capital agent and returns its result.
func runAgent(t *testing.T, rt http.RoundTripper, baseURL, key, question string) (*runlet.Result, error) {
	t.Helper()
	model := openai.NewChatCompletions(openai.Config{
		Model: "gpt-4o-mini", BaseURL: baseURL, APIKey: key, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: rt},
	})
	agent := &runlet.Agent{Name: "capitals", Model: model, Tools: []runlet.Tool{capitalTool()}}
	var res *runlet.Result
	for ev, err := range runlet.NewRuntime().Stream(t.Context(), agent, question) {
		if err != nil {
			return nil, err
		}
		if f, ok := ev.(*runlet.RunFinished); ok {
			res = f.Result
		}
	}
	return res, nil
}

// The bundled demo goes through the real adapter and runtime.
func TestDemoCassetteThroughAdapter(t *testing.T) {
	rep := runlettest.NewReplayer(demo.Cassette(), runlettest.IgnoreBody())
	res, err := runAgent(t, rep, "https://api.openai.com/v1", "unused", demo.Question)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "The capital of the UK is London." {
		t.Errorf("output = %q", res.Output)
	}
	if res.Turns != 2 || res.Usage.InputTokens != 53+78 || res.Usage.OutputTokens != 15+9 {
		t.Errorf("turns %d, usage %+v", res.Turns, res.Usage)
	}
	calls := res.Messages[1].ToolCalls()
	if len(calls) != 1 || calls[0].Name != "get_capital" || string(calls[0].Arguments) != `{"country":"UK"}` {
		t.Errorf("tool calls = %+v", calls)
	}
	if err := rep.Done(); err != nil {
		t.Error(err)
	}
}

// Without IgnoreBody the adapter's own request differs from pydantic-ai's
// recording; the diff must say where, readably.
func TestReplayMismatchDiff(t *testing.T) {
	rep := runlettest.NewReplayer(demo.Cassette())
	_, err := runAgent(t, rep, "http://127.0.0.1:1/v1", "k", "What is the capital of France?")
	var mm *runlettest.MismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("err = %v, want a *MismatchError", err)
	}
	msg := mm.Error()
	t.Log(err)
	for _, want := range []string{
		"does not match recorded interaction 0",
		`body: messages.0.content: recorded "What is the capital of the UK? Use the tool, then answer.", got "What is the capital of France?"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("diff lacks %q:\n%s", want, msg)
		}
	}
	if rep.Remaining() != 2 {
		t.Errorf("a mismatch consumed the recording: remaining %d", rep.Remaining())
	}
	if rep.Err() == nil || rep.Done() == nil {
		t.Error("Err/Done do not report the mismatch")
	}
}

func post(t *testing.T, rt http.RoundTripper, path, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://replay.invalid"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return rt.RoundTrip(req)
}

func cassette(reqJSON, respText string) *runlettest.Cassette {
	return &runlettest.Cassette{Version: 1, Interactions: []runlettest.Interaction{{
		Request:  runlettest.RecordedRequest{Method: "POST", URL: "https://api.example.com/v1/x", Body: runlettest.BodyFrom([]byte(reqJSON))},
		Response: runlettest.RecordedResponse{Status: 200, Body: runlettest.BodyFrom([]byte(respText))},
	}}}
}

func TestReplayMatching(t *testing.T) {
	rec := `{"model":"m","temperature":0.5,"messages":[{"role":"user","content":"hi"}],"metadata":{"trace":"1"}}`
	tests := []struct {
		name  string
		path  string
		body  string
		opts  []runlettest.ReplayOption
		diffs []string // empty: must match
	}{
		{name: "same JSON, other key order and spacing", path: "/v1/x",
			body: `{ "messages":[{"content":"hi","role":"user"}], "metadata":{"trace":"1"},"temperature":5e-1,"model":"m"}`},
		{name: "changed value", path: "/v1/x",
			body:  `{"model":"n","temperature":0.5,"messages":[{"role":"user","content":"hi"}],"metadata":{"trace":"1"}}`,
			diffs: []string{`body: model: recorded "m", got "n"`}},
		{name: "missing and extra fields", path: "/v1/x",
			body:  `{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"trace":"1"},"seed":1}`,
			diffs: []string{"body: seed: not recorded, got 1", "body: temperature: recorded 0.5, missing"}},
		{name: "array length", path: "/v1/x",
			body:  `{"model":"m","temperature":0.5,"messages":[{"role":"user","content":"hi"},{"role":"user","content":"again"}],"metadata":{"trace":"1"}}`,
			diffs: []string{"body: messages: recorded 1 items, got 2"}},
		{name: "ignored fields", path: "/v1/x",
			body: `{"model":"m","temperature":0.5,"messages":[{"role":"user","content":"other"}],"metadata":{"trace":"2"}}`,
			opts: []runlettest.ReplayOption{runlettest.IgnoreFields("metadata.trace", "messages.*.content")}},
		{name: "wrong path", path: "/v1/y", body: rec,
			diffs: []string{"path: recorded /v1/x, got /v1/y"}},
		{name: "not JSON", path: "/v1/x", body: "hello",
			diffs: []string{"body: recorded a JSON body, got hello"}},
		{name: "ignore body", path: "/v1/x", body: "anything",
			opts: []runlettest.ReplayOption{runlettest.IgnoreBody()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := runlettest.NewReplayer(cassette(rec, "ok"), tt.opts...)
			resp, err := post(t, rep, tt.path, tt.body)
			if len(tt.diffs) == 0 {
				if err != nil {
					t.Fatalf("unexpected mismatch: %v", err)
				}
				b, _ := io.ReadAll(resp.Body)
				if string(b) != "ok" || resp.StatusCode != 200 {
					t.Errorf("response %d %q", resp.StatusCode, b)
				}
				if err := rep.Done(); err != nil {
					t.Error(err)
				}
				return
			}
			var mm *runlettest.MismatchError
			if !errors.As(err, &mm) {
				t.Fatalf("err = %v, want a mismatch", err)
			}
			if strings.Join(mm.Diffs, "\n") != strings.Join(tt.diffs, "\n") {
				t.Errorf("diffs:\n%s\nwant:\n%s", strings.Join(mm.Diffs, "\n"), strings.Join(tt.diffs, "\n"))
			}
		})
	}
}

func TestReplayPastEnd(t *testing.T) {
	rep := runlettest.NewReplayer(cassette(`{}`, "ok"))
	if _, err := post(t, rep, "/v1/x", `{}`); err != nil {
		t.Fatal(err)
	}
	_, err := post(t, rep, "/v1/x", `{}`)
	if !errors.Is(err, runlettest.ErrCassetteEnd) {
		t.Fatalf("err = %v, want ErrCassetteEnd", err)
	}
	// Final: an adapter does not retry a request the recording cannot answer.
	var r interface{ Retryable() bool }
	if !errors.As(err, &r) || r.Retryable() {
		t.Errorf("err = %v: retryable", err)
	}
}

// Record a real run against a fake server (with an API key), save, load,
// and replay it offline: same result, no secret in the file.
func TestRecordReplayRoundTrip(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const secret = "sk-test-DO-NOT-SAVE-4242"
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{ID: "call_1", Name: "get_capital", Arguments: `{"country":"UK"}`}}},
		runlettest.OpenAIChatReply{Text: "It is London."},
	)
	defer srv.Close()
	srv.RequireAPIKey(secret)

	rec := runlettest.NewRecorder(nil, runlettest.RedactHeaders("X-Custom-Secret"))
	live, err := runAgent(t, rec, srv.BaseURL(), secret, "Capital of the UK?")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sub", "run.cassette.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{secret, "Authorization", "Bearer"} {
		if strings.Contains(string(data), leak) {
			t.Errorf("cassette contains %q", leak)
		}
	}

	c, err := runlettest.LoadCassette(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) != 2 || !strings.Contains(c.Interactions[0].Response.Text, "data: [DONE]") {
		t.Fatalf("cassette: %d interactions, first response %q", len(c.Interactions), c.Interactions[0].Response.Text)
	}
	if len(c.Interactions[0].Request.JSON) == 0 {
		t.Error("request body not stored as JSON")
	}
	srv.Close() // the replay must not need the server
	rep := runlettest.NewReplayer(c)
	replayed, err := runAgent(t, rep, "http://127.0.0.1:1/v1", "another-key", "Capital of the UK?")
	if err != nil {
		t.Fatal(err)
	}
	if replayed.Output != live.Output || replayed.Output != "It is London." || replayed.Usage != live.Usage {
		t.Errorf("replayed %q %+v, live %q %+v", replayed.Output, replayed.Usage, live.Output, live.Usage)
	}
	if err := rep.Done(); err != nil {
		t.Error(err)
	}
}

func TestRecorderRedacts(t *testing.T) {
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		return &http.Response{StatusCode: 200, Header: http.Header{"Set-Cookie": {"s=1"}, "X-Request-Id": {"r1"}},
			Body: io.NopCloser(strings.NewReader("echo:" + string(b))), Request: r}, nil
	})
	rec := runlettest.NewRecorder(inner, runlettest.RedactHeaders("x-custom-secret"))
	req, _ := http.NewRequest("POST", "https://u:p@api.example.com/v1/x?key=abc&alt=sse", strings.NewReader("body"))
	for _, h := range []string{"Authorization", "X-Api-Key", "Api-Key", "X-Custom-Secret", "Cookie"} {
		req.Header.Set(h, "secret-value")
	}
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := rec.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "echo:body" {
		t.Fatalf("body passed through = %q", b)
	}
	in := rec.Cassette().Interactions[0]
	if len(in.Request.Header) != 1 || in.Request.Header.Get("Anthropic-Version") == "" {
		t.Errorf("request header = %v", in.Request.Header)
	}
	if in.Response.Header.Get("Set-Cookie") != "" || in.Response.Header.Get("X-Request-Id") != "r1" {
		t.Errorf("response header = %v", in.Response.Header)
	}
	if strings.Contains(in.Request.URL, "abc") || strings.Contains(in.Request.URL, "u:p") || !strings.Contains(in.Request.URL, "alt=sse") {
		t.Errorf("url = %s", in.Request.URL)
	}
	if in.Request.Text != "body" || in.Response.Text != "echo:body" {
		t.Errorf("bodies = %q, %q", in.Request.Text, in.Response.Text)
	}
}

func TestReplayPacingHonoursCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c := cassette(`{}`, "data: 1\n\ndata: 2\n\n")
	rep := runlettest.NewReplayer(c, runlettest.WithPacing(time.Hour))
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://x/v1/x", strings.NewReader(`{}`))
	resp, err := rep.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); done <- err }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("read err = %v", err)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("paced body ignored cancellation")
	}

	rep = runlettest.NewReplayer(c, runlettest.WithPacing(time.Millisecond))
	resp, err = post(t, rep, "/v1/x", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "data: 1\n\ndata: 2\n\n" {
		t.Errorf("paced body = %q", b)
	}
}

func TestBodyForms(t *testing.T) {
	for _, in := range [][]byte{nil, []byte(`{"a": 1}`), []byte("data: x\n\n"), {0xff, 0x00, 0x01}, []byte(`"just a string"`)} {
		c := &runlettest.Cassette{Interactions: []runlettest.Interaction{{
			Request:  runlettest.RecordedRequest{Method: "GET", URL: "http://x/", Body: runlettest.BodyFrom(in)},
			Response: runlettest.RecordedResponse{Status: 200, Body: runlettest.BodyFrom(in)},
		}}}
		path := filepath.Join(t.TempDir(), "c.json")
		if err := c.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := runlettest.LoadCassette(path)
		if err != nil {
			t.Fatal(err)
		}
		want := string(in)
		if in != nil && in[0] == '{' {
			want = `{"a":1}`
		}
		if b := got.Interactions[0].Response.Bytes(); string(b) != want {
			t.Errorf("round trip of %q = %q", in, b)
		}
	}
	if _, err := runlettest.ParseCassette([]byte(`{"version":1,"interactions":[{"request":{"method":"GET"},"response":{"status":200}}]}`)); err == nil {
		t.Error("cassette without url accepted")
	}
	if _, err := runlettest.ParseCassette([]byte(`{"version":9,"interactions":[]}`)); err == nil {
		t.Error("unknown version accepted")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
