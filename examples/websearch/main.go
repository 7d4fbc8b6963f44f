// Command websearch asks a question the model answers with the provider's
// own web search, and prints the answer with its citations: the sources
// each part of the text rests on.
//
//	go run ./examples/websearch                                     # offline: a fake Anthropic server answers
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/websearch "What is new in Go 1.26?"
//	OPENAI_API_KEY=sk-... go run ./examples/websearch              # the Responses API
//	GEMINI_API_KEY=... go run ./examples/websearch                 # Google Search grounding
//
// The search runs on the provider's side, within the model call: the agent
// asks for it with runlet.WebSearch() in Agent.HostedTools, the same way for
// every provider. What the search did comes back as a runlet.HostedToolPart
// (shown by a HostedToolFinished event), the citations as Citations on the
// answer's TextParts, and the searches are counted in Usage.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

const defaultQuestion = "What is new in Go 1.26? Answer in two sentences."

func main() {
	question := strings.Join(os.Args[1:], " ")
	if err := run(context.Background(), question, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "websearch:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, question string, getenv func(string) string, stdout, stderr io.Writer) error {
	question = cmp.Or(question, defaultQuestion)
	var model runlet.Model
	switch {
	case getenv("ANTHROPIC_API_KEY") != "":
		model = anthropic.NewMessages(anthropic.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "claude-sonnet-4-5")})
	case getenv("OPENAI_API_KEY") != "":
		model = openai.NewResponses(openai.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "gpt-5-mini")})
	case getenv("GEMINI_API_KEY") != "" || getenv("GOOGLE_API_KEY") != "":
		model = gemini.New(gemini.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "gemini-2.5-flash")})
	default:
		fmt.Fprintln(stderr, "No ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY: a fake Anthropic server answers (offline).")
		srv := offlineServer()
		defer srv.Close()
		model = anthropic.NewMessages(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "offline", Model: "claude-sonnet-4-5"})
	}

	agent := &runlet.Agent{
		Name:         "researcher",
		Instructions: "Search the web before you answer, and cite your sources.",
		Model:        model,
		HostedTools:  []runlet.HostedTool{runlet.WebSearch()},
	}
	var res *runlet.Result
	midLine := false // the streamed text has not ended its line
	for ev, err := range runlet.NewRuntime().Stream(ctx, agent, question) {
		if err != nil {
			return err
		}
		switch ev := ev.(type) {
		case *runlet.HostedToolFinished:
			// What the provider's tool did during the model call: the event
			// comes after the call, so after the text it streamed; end
			// that line first (stdout and stderr share a terminal).
			if midLine {
				fmt.Fprintln(stdout)
				midLine = false
			}
			fmt.Fprintf(stderr, "%s %s: %d source(s)\n", ev.Part.Kind, ev.Part.Input, len(ev.Part.Sources))
		case *runlet.TextDelta:
			fmt.Fprint(stdout, ev.Delta)
			midLine = !strings.HasSuffix(ev.Delta, "\n")
		case *runlet.RunFinished:
			res = ev.Result
		}
	}
	if midLine {
		fmt.Fprintln(stdout)
	}
	if res == nil {
		return fmt.Errorf("the run did not finish")
	}
	printCitations(stdout, res.Messages[len(res.Messages)-1])
	fmt.Fprintf(stdout, "web searches: %d\n", res.Usage.WebSearchRequests)
	return nil
}

// printCitations lists each cited span of the answer with its source,
// numbering the sources in the order they are first cited.
func printCitations(w io.Writer, answer runlet.Message) {
	numbers := map[string]int{}
	var sources []runlet.Citation
	fmt.Fprintln(w, "\ncitations:")
	for _, p := range answer.Parts {
		t, ok := p.(runlet.TextPart)
		if !ok {
			continue
		}
		for _, c := range t.Citations {
			key := cmp.Or(c.URL, c.FileID)
			n, seen := numbers[key]
			if !seen {
				sources = append(sources, c)
				n = len(sources)
				numbers[key] = n
			}
			fmt.Fprintf(w, "  %q [%d]\n", strings.TrimSpace(c.Span(t.Text)), n)
		}
	}
	fmt.Fprintln(w, "sources:")
	for i, c := range sources {
		fmt.Fprintf(w, "  [%d] %s <%s>\n", i+1, cmp.Or(c.Title, "untitled"), c.URL)
	}
}

// offlineServer is a fake Messages API that answers as Anthropic does with
// its web search tool: the search's blocks, then text citing the results.
func offlineServer() *runlettest.AnthropicServer {
	notes := runlettest.AnthropicSearchResult{URL: "https://go.dev/doc/go1.26", Title: "Go 1.26 Release Notes", EncryptedContent: "EpsCCioIBxgC-offline-1"}
	blog := runlettest.AnthropicSearchResult{URL: "https://go.dev/blog/go1.26", Title: "Go 1.26 is released", EncryptedContent: "EpsCCioIBxgC-offline-2"}
	content := runlettest.AnthropicWebSearch("srvtoolu_offline", "Go 1.26 release notes", notes, blog)
	content = append(content,
		runlettest.AnthropicText("According to the release notes, "),
		runlettest.AnthropicCitedText("Go 1.26 refines the language and the toolchain and speeds up the runtime.", notes),
		runlettest.AnthropicText(" "),
		runlettest.AnthropicCitedText("It was released in February 2026.", blog),
	)
	return runlettest.NewAnthropicServer(runlettest.AnthropicResponse{
		Content:   content,
		Usage:     runlettest.AnthropicUsage{InputTokens: 2100, OutputTokens: 60, WebSearchRequests: 1},
		ChunkSize: 8,
	})
}
