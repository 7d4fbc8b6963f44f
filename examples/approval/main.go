// Command approval shows human-in-the-loop: a delete_file tool needs
// approval, so the run stops as interrupted with the pending calls, saved as
// a checkpoint in a SQLite file. The program asks on the terminal and
// resumes the run with a fresh Runtime — as another process or another
// instance of your service would — approving, rejecting or editing each call.
//
//	go run ./examples/approval                 # scripted model, offline
//	OPENAI_API_KEY=sk-... go run ./examples/approval -live
//
// The files it "deletes" are only printed; nothing is touched.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/store/sqlite"
)

type deleteArgs struct {
	Path string `json:"path" jsonschema:"absolute path of the file to delete"`
}

func main() {
	live := flag.Bool("live", false, "use OpenAI (OPENAI_API_KEY / OPENAI_BASE_URL) instead of a scripted model")
	model := flag.String("model", "gpt-4o-mini", "model name with -live")
	db := flag.String("db", filepath.Join(os.TempDir(), "runlet-approval.db"), "SQLite file for sessions and checkpoints")
	flag.Parse()
	if err := run(context.Background(), *live, *model, *db, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

func newAgent(live bool, modelName string) *runlet.Agent {
	deleteFile := runlet.NewTool("delete_file", "Delete a file from disk.",
		func(ctx context.Context, in deleteArgs) (string, error) {
			return "deleted " + in.Path + " (pretend)", nil
		}, runlet.WithApproval())
	listFiles := runlet.NewTool("list_files", "List files in /tmp/reports.",
		func(ctx context.Context, _ struct{}) ([]string, error) {
			return []string{"/tmp/reports/2024-q1.csv", "/tmp/reports/2024-q2.csv", "/tmp/reports/keep.txt"}, nil
		})
	var m runlet.Model
	if live {
		m = openai.NewChatCompletions(openai.Config{Model: modelName})
	} else {
		m = runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("call_1", "list_files", `{}`)),
			runlettest.ToolCallReply(
				runlettest.Call("call_2", "delete_file", `{"path":"/tmp/reports/2024-q1.csv"}`),
				runlettest.Call("call_3", "delete_file", `{"path":"/tmp/reports/2024-q2.csv"}`),
			),
			runlettest.TextReply("I deleted what you approved and left the rest."),
		)
	}
	return &runlet.Agent{
		Name:         "janitor",
		Instructions: "You tidy /tmp/reports. Delete old CSV reports; keep everything else.",
		Model:        m,
		Tools:        []runlet.Tool{listFiles, deleteFile},
	}
}

func run(ctx context.Context, live bool, modelName, dbPath string, in io.Reader, out io.Writer) error {
	agent := newAgent(live, modelName)
	if !live {
		fmt.Fprintln(out, "(scripted model; pass -live to use OpenAI)")
	}
	store, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer store.Close()

	// First process: the run stops at the calls that need approval.
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(ctx, agent, "Clean up the old reports.", runlet.WithSession("janitor-demo"))
	if err != nil {
		return err
	}
	if res.Status != runlet.StateInterrupted {
		fmt.Fprintln(out, res.Output)
		return nil
	}
	fmt.Fprintf(out, "run %s is waiting for approval (checkpoint saved in %s)\n", res.RunID, dbPath)

	// A human decides on each pending call.
	answers := bufio.NewScanner(in)
	var decisions []runlet.Decision
	for _, call := range res.Pending {
		fmt.Fprintf(out, "\n%s %s\n  [y]es / [n]o / [e]dit arguments? ", call.Name, call.Arguments)
		answer := ""
		if answers.Scan() {
			answer = strings.TrimSpace(answers.Text())
		}
		switch strings.ToLower(answer) {
		case "y", "yes":
			decisions = append(decisions, runlet.Approve(call.ID))
		case "e", "edit":
			fmt.Fprint(out, "  new path: ")
			answers.Scan()
			args, _ := json.Marshal(deleteArgs{Path: strings.TrimSpace(answers.Text())})
			decisions = append(decisions, runlet.ApproveWithArguments(call.ID, args))
		default:
			decisions = append(decisions, runlet.Reject(call.ID, "the user said no"))
		}
	}

	// Later, anywhere with access to the store: a new Runtime resumes it.
	rt := runlet.NewRuntime(runlet.WithStore(store))
	for ev, err := range rt.ResumeStream(ctx, agent, res.RunID, decisions...) {
		if err != nil {
			return err
		}
		switch ev := ev.(type) {
		case *runlet.ToolFinished:
			fmt.Fprintf(out, "  %s → %s\n", ev.Call.Name, ev.Result.Content)
		case *runlet.RunFinished:
			fmt.Fprintf(out, "\n%s\n", ev.Result.Output)
		}
	}
	return nil
}
