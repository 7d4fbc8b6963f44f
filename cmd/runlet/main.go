// Command runlet runs Runlet agents from the command line: one prompt
// (runlet run), an interactive session (runlet chat), from flags or a YAML
// config file, against any provider Runlet has an adapter for.
//
//	runlet run "What is the capital of the UK?"
//	runlet run --provider anthropic --model claude-sonnet-4-5 "Hello"
//	echo "Summarise: ..." | runlet run --provider ollama --model llama3.2
//	runlet chat --config agent.yaml --session work
//
// With no provider configured (no OPENAI_API_KEY, ANTHROPIC_API_KEY,
// GEMINI_API_KEY or OPENAI_BASE_URL, no --config, --provider or --base-url),
// runlet replays a bundled recorded session through the real OpenAI adapter
// and runtime, says so, and prints how to go live.
//
// Exit codes: 0 success; 1 the run failed (provider error, ...); 2 usage or
// configuration error; 3 a limit stopped the run (max turns, usage limit,
// context overflow); 4 the run waits for a tool approval that could not be
// asked; 130 interrupted (Ctrl-C; 143 for SIGTERM).
//
// Run "runlet help" for everything else.
//
// The clouds whose credentials need an SDK (provider bedrock and vertex,
// azure with Entra ID) are in the cloud module's build of this command,
// github.com/runlet/runlet/cloud/cmd/runlet, so that this one links none;
// given one of those providers, this command says so.
//
// The command's body is package internal/cli.
package main

import (
	"os"

	"github.com/runlet/runlet/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Extensions{}))
}
