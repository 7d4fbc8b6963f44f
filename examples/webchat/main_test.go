package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// chat posts a useChat body and returns the chunks' types and the chunks.
func chat(t *testing.T, url, body string) ([]string, []map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var types []string
	var chunks []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatal(err)
		}
		types = append(types, c["type"].(string))
		chunks = append(chunks, c)
	}
	return types, chunks
}

// TestOffline serves the page and chats offline: reasoning, get_weather,
// save_note waiting for approval, and the approval resuming the run.
func TestOffline(t *testing.T) {
	a, err := newApp(func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()

	for _, path := range []string{"/", "/app.js", "/style.css"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) == 0 {
			t.Errorf("GET %s: %d, %d bytes", path, resp.StatusCode, len(b))
		}
	}

	user := `{"id":"u1","role":"user","parts":[{"type":"text","text":"Weather in Berlin?"}]}`
	types, chunks := chat(t, srv.URL, `{"id":"c1","messages":[`+user+`]}`)
	joined := strings.Join(types, " ")
	for _, want := range []string{"reasoning-delta", "tool-input-available", "tool-output-available", "text-delta", "tool-approval-request"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s in %s", want, joined)
		}
	}
	var runID, callID, approvalID string
	for _, c := range chunks {
		switch c["type"] {
		case "start":
			runID = c["messageId"].(string)
		case "tool-approval-request":
			callID, approvalID = c["toolCallId"].(string), c["approvalId"].(string)
		case "tool-output-available":
			if !strings.Contains(c["output"].(string), "Berlin: sunny") {
				t.Errorf("weather output %v", c["output"])
			}
		}
	}
	assistant := `{"id":"` + runID + `","role":"assistant","parts":[{"type":"step-start"},{"type":"dynamic-tool","toolName":"save_note",` +
		`"toolCallId":"` + callID + `","state":"approval-responded","input":{"text":"x"},"approval":{"id":"` + approvalID + `","approved":true}}]}`
	types, chunks = chat(t, srv.URL, `{"id":"c1","messages":[`+user+`,`+assistant+`]}`)
	var text strings.Builder
	for _, c := range chunks {
		if c["type"] == "text-delta" {
			text.WriteString(c["delta"].(string))
		}
	}
	if text.String() != "Done: the note is saved. Anything else?" || types[len(types)-1] != "finish" {
		t.Errorf("after the approval: %s, %q", strings.Join(types, " "), text.String())
	}
}

// TestRunServes checks run listens, serves and stops with its context.
func TestRunServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", func(string) string { return "" }, pw); pw.Close() }()
	sc := bufio.NewScanner(pr)
	var url string
	for url == "" && sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "webchat: open "); ok {
			url = u
		}
	}
	go io.Copy(io.Discard, pr)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop")
	}
}

// TestOfflineAGUI talks to the same agent over AG-UI: the tool calls
// stream, save_note interrupts the run, and the resume with the page's
// approval saves the note.
func TestOfflineAGUI(t *testing.T) {
	a, err := newApp(func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()

	post := func(body string) []map[string]any {
		t.Helper()
		resp, err := http.Post(srv.URL+"/api/agui", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		var events []map[string]any
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev map[string]any
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatal(err)
				}
				events = append(events, ev)
			}
		}
		return events
	}
	events := post(`{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"Weather in Berlin?"}]}`)
	last := events[len(events)-1]
	outcome, _ := last["outcome"].(map[string]any)
	if last["type"] != "RUN_FINISHED" || outcome["type"] != "interrupt" {
		t.Fatalf("last event %v", last)
	}
	interrupt := outcome["interrupts"].([]any)[0].(map[string]any)
	body, _ := json.Marshal(map[string]any{"threadId": "t1", "runId": "r2", "messages": []any{},
		"resume": []any{map[string]any{"interruptId": interrupt["id"], "status": "resolved", "payload": map[string]any{"approved": true}}}})
	events = post(string(body))
	var text string
	for _, ev := range events {
		if ev["type"] == "TEXT_MESSAGE_CONTENT" {
			text += ev["delta"].(string)
		}
	}
	if last := events[len(events)-1]; last["type"] != "RUN_FINISHED" || !strings.Contains(text, "the note is saved") {
		t.Errorf("resumed run ended with %v, text %q", last, text)
	}
}

// TestLive: with OPENAI_BASE_URL (and a key) the example talks to that
// server, here a fake standing in for OpenAI, and says nothing of offline.
func TestLive(t *testing.T) {
	fake := newFakeModel()
	defer fake.Close()
	env := map[string]string{"OPENAI_BASE_URL": fake.BaseURL(), "OPENAI_API_KEY": "sk-test", "RUNLET_MODEL": "gpt-test"}
	var stderr strings.Builder
	a, err := newApp(func(k string) string { return env[k] }, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if stderr.Len() != 0 {
		t.Errorf("live, it said %q", stderr.String())
	}
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()
	types, _ := chat(t, srv.URL, `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Weather in Oslo?"}]}]}`)
	if !strings.Contains(strings.Join(types, " "), "tool-approval-request") {
		t.Errorf("chunks %v", types)
	}
	reqs := fake.Requests()
	if len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer sk-test" || !strings.Contains(string(reqs[0].Body), `"gpt-test"`) {
		t.Errorf("the server got %d requests, first %+v", len(reqs), reqs)
	}
}
