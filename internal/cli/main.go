// Package cli is the body of the runlet command: cmd/runlet runs it as
// is, and the cloud module's cloud/cmd/runlet runs it with the clouds'
// credentials registered (Extensions), so the main module's command links
// no cloud SDK. See cmd/runlet for the command's documentation.
package cli

import (
	"bufio"
	"fmt"
	"github.com/runlet/runlet/config"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/runlet/runlet/internal/suggest"
	"golang.org/x/term"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitLimit       = 3
	exitApproval    = 4
	exitInterrupted = 130
)

// version is set at build time with
// -ldflags "-X github.com/runlet/runlet/internal/cli.version=v1.2.3";
// otherwise it comes from the module's build information.
var version string

// Extensions are what a build of the command adds to it.
type Extensions struct {
	// Providers reach the clouds whose credentials need an SDK (see
	// config.ProviderOpeners): --provider bedrock and vertex, and azure
	// with Entra ID. The cloud module's command sets them; without them
	// those providers say which command to use instead.
	Providers config.ProviderOpeners
}

// Main runs the command line args (without the program name) with ext
// and returns the exit code.
func Main(args []string, ext Extensions) int {
	a := newApp(os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	a.lookupEnv = os.LookupEnv
	a.ext = ext
	return a.main(args)
}

const usageText = `runlet runs an AI agent from the command line.

Usage:
  runlet run [flags] [prompt]   run an agent once; the prompt comes from the
                                arguments, else standard input
  runlet chat [flags]           an interactive session that keeps its history
  runlet mcp serve [flags]      serve the agent as an MCP server (stdio or HTTP)
  runlet version                print the version
  runlet help [command]         help for a command

Without a model configured, runlet replays a recorded session (offline) and
says so. The recording answers one question, its own: chat ends after it,
mcp serve answers one call, and --output-schema and --record need a live
model. To go live, set OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY
or OPENAI_BASE_URL (for Ollama: http://localhost:11434/v1), or pass --config.

Examples:
  runlet run "What is the capital of the UK?"
  runlet run --provider anthropic "Explain SSE in one sentence."
  runlet chat --provider ollama --model llama3.2
  runlet run --config examples/config/agent.yaml --json "What time is it?"

Exit codes:
  0    success
  1    the run failed (provider error, network, ...)
  2    usage or configuration error
  3    a limit stopped the run (max turns, usage limit, context overflow)
  4    the run waits for a tool approval that could not be asked
  130  interrupted (Ctrl-C; 143 for SIGTERM)
`

func (a *app) main(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(a.stderr, usageText)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return a.cmdRun(rest)
	case "chat":
		return a.cmdChat(rest)
	case "mcp":
		return a.cmdMCP(rest)
	case "version", "--version", "-version", "-v":
		fmt.Fprintln(a.stdout, versionString())
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			switch rest[0] {
			case "run":
				fmt.Fprint(a.stdout, runUsage)
				return exitOK
			case "chat":
				fmt.Fprint(a.stdout, chatUsage)
				return exitOK
			case "mcp":
				fmt.Fprint(a.stdout, mcpUsage)
				return exitOK
			case "version":
				fmt.Fprintln(a.stdout, "Usage: runlet version\n\nPrints the version, the Go version and the platform.")
				return exitOK
			}
			fmt.Fprintf(a.stderr, "runlet help: unknown command %q\n", rest[0])
			return exitUsage
		}
		fmt.Fprint(a.stdout, usageText)
		return exitOK
	}
	msg := fmt.Sprintf("runlet: unknown command %q", cmd)
	if s := suggest.Closest(cmd, []string{"run", "chat", "mcp", "version", "help"}); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else if !strings.HasPrefix(cmd, "-") {
		msg += fmt.Sprintf(`; to run a prompt, write: runlet run %q`, strings.Join(args, " "))
	}
	fmt.Fprintf(a.stderr, "%s\nRun \"runlet help\" for usage.\n", msg)
	return exitUsage
}

func versionString() string {
	v := version
	if v == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			v = bi.Main.Version
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 && (v == "" || v == "(devel)") {
					v = "devel-" + s.Value[:12]
				}
			}
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	return fmt.Sprintf("runlet %s (%s %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// app is one invocation: its standard streams and environment.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	lookupEnv      func(string) (string, bool) // getenv's, telling unset from empty

	stdinTTY, stdoutTTY, stderrTTY bool
	color                          bool

	in     *bufio.Reader // see lines
	editor *editor       // see lineEditor
	ext    Extensions    // what this build adds
}

func newApp(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *app {
	lookupEnv := func(k string) (string, bool) { v := getenv(k); return v, v != "" }
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, lookupEnv: lookupEnv}
	a.stdinTTY, a.stdoutTTY, a.stderrTTY = isTerminal(stdin), isTerminal(stdout), isTerminal(stderr)
	a.color = a.stderrTTY && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	return a
}

// isTerminal reports whether v is an *os.File open on a terminal: no
// spinner, colours, prompts or line editing otherwise. A character device
// is not enough (/dev/null is one).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
