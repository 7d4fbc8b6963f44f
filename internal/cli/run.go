package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/demo"
)

// maxPromptBytes bounds a prompt read from standard input.
const maxPromptBytes = 16 << 20

func (a *app) cmdRun(args []string) int {
	var f flags
	fs := newFlagSet("run", &f)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(a.stdout, runUsage)
		return exitOK
	}
	if err == nil {
		err = f.validate()
	}
	if err != nil {
		return a.usage("run", err)
	}
	if f.outputSchema != "" && !f.json {
		f.quiet = true // stdout gets the validated JSON only, not every attempt
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	if prompt == "" && !a.stdinTTY {
		data, err := io.ReadAll(io.LimitReader(a.stdin, maxPromptBytes+1))
		if err != nil {
			fmt.Fprintf(a.stderr, "runlet: reading the prompt from standard input: %v\n", err)
			return exitFailed
		}
		if len(data) > maxPromptBytes {
			fmt.Fprintf(a.stderr, "runlet: the prompt on standard input is over %d MiB\n", maxPromptBytes>>20)
			return exitUsage
		}
		prompt = strings.TrimSpace(string(data))
	}

	sig := a.startInterrupter()
	defer sig.stop()
	var extra []runlet.RuntimeOption
	if f.json {
		extra = append(extra, runlet.WithObservers(runlet.NewJSONLObserver(a.stdout)))
	}
	s, err := a.prepare(context.Background(), &f, extra...)
	if err != nil {
		return a.prepareFailed("run", err)
	}
	defer s.close(a)

	if s.demo != nil {
		a.demoNotice(prompt, s.ignored)
		prompt = demo.Question
	}
	if prompt == "" {
		return a.usage("run", errors.New("no prompt: give it as an argument (runlet run \"...\") or on standard input"))
	}
	var opts []runlet.RunOption
	if f.session != "" {
		opts = append(opts, runlet.WithSession(f.session))
	}
	code := a.turn(sig, s, &f, prompt, opts...)
	if s.demo != nil && code == exitOK {
		a.demoEnd()
	}
	return code
}

// usage reports a command-line error in one line, with a hint to the
// command's help (not the whole help, which would bury the error): exit 2.
func (a *app) usage(cmd string, err error) int {
	fmt.Fprintf(a.stderr, "runlet %s: %v\n", cmd, err)
	a.helpHint(cmd)
	return exitUsage
}

// helpHint points to the command's help.
func (a *app) helpHint(cmd string) {
	fmt.Fprintf(a.stderr, "Run \"runlet %s --help\" for usage.\n", cmd)
}

// prepareFailed reports a setup failure: configuration problems are usage
// errors (exit 2), without the long usage text; others fail the run.
func (a *app) prepareFailed(cmd string, err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		msg := err.Error()
		if strings.Contains(msg, "\n") { // several config errors, one per line
			fmt.Fprintf(a.stderr, "runlet %s: invalid configuration:\n  %s\n", cmd, strings.ReplaceAll(printable(msg), "\n", "\n  "))
		} else {
			fmt.Fprintf(a.stderr, "runlet %s: %s\n", cmd, printable(msg))
		}
		a.helpHint(cmd)
		return exitUsage
	}
	// A setup error may quote an MCP server's answer.
	fmt.Fprintf(a.stderr, "runlet %s: %s\n", cmd, printable(err.Error()))
	return exitFailed
}

// turn runs the agent on one input, rendering it, asking for approvals when
// it can, and returns the exit code.
func (a *app) turn(sig *interrupter, s *session, f *flags, input string, opts ...runlet.RunOption) int {
	ctx, release := sig.arm(context.Background())
	interrupted := func() os.Signal { return release() }
	defer release()

	var r *renderer
	if !f.json && !f.quiet {
		r = a.newRenderer(!f.noReasoning)
		defer r.close()
	}
	agent := s.setup.Agent
	seq := s.rt.Stream(ctx, agent, input, opts...)
	for {
		var final runlet.Event
		var runErr error
		for ev, err := range seq {
			if ev != nil {
				if r != nil {
					r.event(ev)
				}
				switch ev.(type) {
				case *runlet.RunFinished, *runlet.RunFailed, *runlet.RunInterrupted:
					final = ev
				}
			}
			if err != nil {
				runErr = err
			}
		}
		switch e := final.(type) {
		case *runlet.RunFinished:
			if f.quiet {
				out := e.Result.Output
				if a.stdoutTTY {
					out = printable(out)
				}
				fmt.Fprintln(a.stdout, out)
			}
			if r != nil {
				r.summary(e.Result) // a resumed run's usage includes the part before
			}
			if f.usage {
				a.printUsage(e.Result)
			}
			return exitOK
		case *runlet.RunInterrupted:
			if a.stdinTTY && !f.json && ctx.Err() == nil {
				decisions, ok := a.askApprovals(r, e.Pending)
				if ok {
					seq = s.rt.ResumeStream(ctx, agent, e.Result.RunID, decisions...)
					continue
				}
			}
			if r != nil {
				r.close()
			}
			if f.usage {
				a.printUsage(e.Result)
			}
			var names []string
			for _, c := range e.Pending {
				names = append(names, printable(c.Name+" "+compactArgs(c.Arguments)))
			}
			fmt.Fprintf(a.stderr, "runlet: the run waits for approval of: %s (approve on a terminal, or drop require_approval)\n", strings.Join(names, "; "))
			return exitApproval
		}
		if r != nil {
			r.close()
		}
		if e, ok := final.(*runlet.RunFailed); ok && f.usage {
			a.printUsage(e.Result)
		}
		return a.failure(runErr, interrupted())
	}
}

// failure reports a failed run and returns its exit code.
func (a *app) failure(err error, sig os.Signal) int {
	if sig != nil {
		fmt.Fprintln(a.stderr, a.style(dim, "runlet: interrupted"))
		return signalCode(sig)
	}
	if err == nil {
		err = errors.New("the run ended without a result")
	}
	// An error may carry what a provider, a tool or a hook wrote.
	text := printable(err.Error())
	var pe *runlet.PolicyError
	switch {
	case errors.Is(err, runlet.ErrMaxTurns):
		fmt.Fprintf(a.stderr, "runlet: stopped: %s; raise --max-turns (or max_turns in the config)\n", text)
		return exitLimit
	case errors.Is(err, runlet.ErrUsageLimit), errors.Is(err, runlet.ErrContextOverflow):
		fmt.Fprintf(a.stderr, "runlet: stopped: %s\n", text)
		return exitLimit
	case errors.As(err, &pe):
		fmt.Fprintf(a.stderr, "runlet: stopped by %s: %s\n", printable(pe.Policy), text)
		return exitFailed
	}
	var end *demo.EndError
	if errors.As(err, &end) {
		fmt.Fprintln(a.stderr, a.style(red, "runlet: stopped: "+end.Error()))
		return exitFailed
	}
	msg := "runlet: run failed: " + text
	var perr *runlet.ProviderError
	if errors.As(err, &perr) {
		switch {
		case perr.StatusCode == 401 || perr.StatusCode == 403:
			msg += "\n        check the API key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ... or api_key in the config)"
		case perr.StatusCode == 404:
			msg += "\n        check the model name (--model) and the base URL"
		case perr.StatusCode == 0 && strings.Contains(err.Error(), "connection refused"):
			msg += "\n        is the server running at the base URL?"
		}
	}
	fmt.Fprintln(a.stderr, a.style(red, msg))
	return exitFailed
}

// askApprovals asks, on the terminal, about each call waiting for approval.
func (a *app) askApprovals(r *renderer, pending []runlet.ToolCallPart) ([]runlet.Decision, bool) {
	if r != nil {
		r.mu.Lock()
		r.stopSpinner()
		r.line()
		r.mu.Unlock()
	}
	var ds []runlet.Decision
	for _, c := range pending {
		line, err := a.readLine(fmt.Sprintf("%s %s %s? [y/N] ", a.style(bold, "allow"), a.style(cyan, printable(c.Name)), printable(oneLine(compactArgs(c.Arguments), 200))))
		if err != nil {
			fmt.Fprintln(a.stderr)
			return nil, false
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			ds = append(ds, runlet.Approve(c.ID))
		default:
			ds = append(ds, runlet.Reject(c.ID, "the user declined this call"))
		}
	}
	if r != nil {
		r.mu.Lock()
		r.errCol0, r.outCol0 = true, true
		r.mu.Unlock()
	}
	return ds, true
}

// interrupter turns the first Ctrl-C (or SIGTERM) during a run into a
// cancellation of that run; a second one, or one while no run is going,
// exits at once.
type interrupter struct {
	stderr io.Writer
	ch     chan os.Signal
	done   chan struct{}
	exited chan struct{}

	mu     sync.Mutex
	cancel context.CancelFunc
	sig    os.Signal
}

func (a *app) startInterrupter() *interrupter {
	in := &interrupter{stderr: a.stderr, ch: make(chan os.Signal, 2), done: make(chan struct{}), exited: make(chan struct{})}
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer close(in.exited)
		for {
			select {
			case s := <-in.ch:
				in.handle(s)
			case <-in.done:
				return
			}
		}
	}()
	return in
}

func (in *interrupter) handle(s os.Signal) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cancel != nil && in.sig == nil {
		in.sig = s
		in.cancel()
		fmt.Fprintln(in.stderr, "\nrunlet: stopping… (press Ctrl-C again to quit at once)")
		return
	}
	fmt.Fprintln(in.stderr)
	os.Exit(signalCode(s))
}

// arm returns a context for one run, cancelled by the next signal, and a
// release func returning the signal that cancelled it, if any.
func (in *interrupter) arm(parent context.Context) (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancel(parent)
	in.mu.Lock()
	in.cancel, in.sig = cancel, nil
	in.mu.Unlock()
	var once sync.Once
	var got os.Signal
	return ctx, func() os.Signal {
		once.Do(func() {
			in.mu.Lock()
			got = in.sig
			in.cancel, in.sig = nil, nil
			in.mu.Unlock()
			cancel()
		})
		return got
	}
}

func (in *interrupter) stop() {
	signal.Stop(in.ch)
	close(in.done)
	<-in.exited
}

func signalCode(s os.Signal) int {
	if s == syscall.SIGTERM {
		return 128 + int(syscall.SIGTERM)
	}
	return exitInterrupted
}
