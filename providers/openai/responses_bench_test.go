package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// Stream delta throughput of the Responses adapter against a hand-written
// minimal decoder (net/http + bufio + encoding/json) reading the same
// 1,000-delta stream:
//
//   - FakeServer: from runlettest's fake Responses server, which renders each
//     event as it goes (the server's work is in the numbers of both).
//   - StaticServer: a loopback server writing the pre-rendered stream bytes.
//   - Memory: the decoders alone, on the stream bytes in memory.
//
// Compare with benchstat, or read ns/op side by side:
//
//	go test -run '^$' -bench BenchmarkResponsesStream -benchmem ./providers/openai/

const respBenchDeltas = 1000

// respBenchTurn answers with 1,000 text deltas of 5 runes.
func respBenchTurn() runlettest.ResponsesTurn {
	return runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText(strings.Repeat("word ", respBenchDeltas))}}
}

var respBenchReq = &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("Write 1000 words.")}}

// respBaseline is the hand-written minimal decoder: it reads data lines,
// decodes each into a small struct, forwards text deltas and stops at
// response.completed.
func respBaseline(client *http.Client, url string, body []byte, onDelta func(string)) (string, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return respBaselineDecode(resp.Body, onDelta)
}

func respBaselineDecode(r io.Reader, onDelta func(string)) (string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var text strings.Builder
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return "", err
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		var ev struct {
			Type     string `json:"type"`
			Delta    string `json:"delta"`
			Response *struct {
				ID    string `json:"id"`
				Usage struct {
					InputTokens  int `json:"input_tokens"`
					OutputTokens int `json:"output_tokens"`
				} `json:"usage"`
			} `json:"response"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return "", err
		}
		switch ev.Type {
		case "response.output_text.delta":
			onDelta(ev.Delta)
			text.WriteString(ev.Delta)
		case "response.completed":
			return text.String(), nil
		case "response.failed", "error":
			return "", errors.New(ev.Type)
		}
	}
}

func respBenchAdapter(b *testing.B, m *Responses) {
	b.Helper()
	deltas := 0
	var final *runlet.ModelResponse
	for ev, err := range m.Stream(context.Background(), respBenchReq) {
		if err != nil {
			b.Fatal(err)
		}
		switch ev.Kind {
		case runlet.StreamTextDelta:
			deltas++
		case runlet.StreamDone:
			final = ev.Response
		}
	}
	if deltas != respBenchDeltas || len(final.Message.Text()) != 5*respBenchDeltas {
		b.Fatalf("%d deltas, %d bytes", deltas, len(final.Message.Text()))
	}
}

func respBenchBaseline(b *testing.B, client *http.Client, url string, body []byte) {
	b.Helper()
	deltas := 0
	text, err := respBaseline(client, url, body, func(string) { deltas++ })
	if err != nil || deltas != respBenchDeltas || len(text) != 5*respBenchDeltas {
		b.Fatalf("%d deltas, %d bytes, %v", deltas, len(text), err)
	}
}

func respBenchClient(b *testing.B) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// respBenchStreamBytes renders the benchmark stream once with the fake server.
func respBenchStreamBytes(b *testing.B) []byte {
	srv := runlettest.NewOpenAIResponsesServer(respBenchTurn())
	defer srv.Close()
	srv.ChunkSize = 5
	resp, err := http.Post(srv.BaseURL()+"/responses", "application/json", strings.NewReader(`{"model":"gpt-5","input":"hi","stream":true}`))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkResponsesStreamFakeServer(b *testing.B) {
	srv := runlettest.NewOpenAIResponsesServer()
	defer srv.Close()
	srv.ChunkSize = 5
	client := respBenchClient(b)
	b.Run("adapter", func(b *testing.B) {
		m := NewResponses(Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gpt-5", HTTPClient: client})
		b.ReportAllocs()
		for b.Loop() {
			srv.Enqueue(respBenchTurn())
			respBenchAdapter(b, m)
		}
	})
	b.Run("baseline", func(b *testing.B) {
		body := []byte(`{"model":"gpt-5","input":[{"type":"message","role":"user","content":"Write 1000 words."}],"store":false,"stream":true}`)
		b.ReportAllocs()
		for b.Loop() {
			srv.Enqueue(respBenchTurn())
			respBenchBaseline(b, client, srv.BaseURL()+"/responses", body)
		}
	})
}

func BenchmarkResponsesStreamStaticServer(b *testing.B) {
	data := respBenchStreamBytes(b)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.Write(data)
	}))
	defer srv.Close()
	client := respBenchClient(b)
	b.Run("adapter", func(b *testing.B) {
		m := NewResponses(Config{BaseURL: srv.URL, APIKey: "k", Model: "gpt-5", HTTPClient: client})
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			respBenchAdapter(b, m)
		}
	})
	b.Run("baseline", func(b *testing.B) {
		body := []byte(`{"model":"gpt-5","input":[{"type":"message","role":"user","content":"Write 1000 words."}],"store":false,"stream":true}`)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			respBenchBaseline(b, client, srv.URL+"/responses", body)
		}
	})
}

func BenchmarkResponsesStreamMemory(b *testing.B) {
	data := respBenchStreamBytes(b)
	b.Run("adapter", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			d := newRespDecoder("openai", bytes.NewReader(data), 0)
			deltas := 0
			for {
				ev, err := d.next()
				if err != nil {
					if err != io.EOF {
						b.Fatal(err)
					}
					break
				}
				if ev.Kind == runlet.StreamTextDelta {
					deltas++
				}
			}
			if deltas != respBenchDeltas {
				b.Fatalf("%d deltas", deltas)
			}
		}
	})
	b.Run("baseline", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			deltas := 0
			if _, err := respBaselineDecode(bytes.NewReader(data), func(string) { deltas++ }); err != nil || deltas != respBenchDeltas {
				b.Fatalf("%d deltas, %v", deltas, err)
			}
		}
	})
}
