package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/demo"
)

func (a *app) cmdChat(args []string) int {
	var f flags
	fs := newFlagSet("chat", &f)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(a.stdout, chatUsage)
		return exitOK
	}
	if err == nil {
		err = f.validate()
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q: chat reads prompts from standard input (for one prompt, use runlet run)", pos[0])
	}
	if err != nil {
		return a.usage("chat", err)
	}

	sig := a.startInterrupter()
	defer sig.stop()
	// History lives in memory unless --session names a durable one (prepare
	// then adds the SQLite store, which takes precedence).
	extra := []runlet.RuntimeOption{runlet.WithStore(runlet.NewMemoryStore())}
	if f.json {
		extra = append(extra, runlet.WithObservers(runlet.NewJSONLObserver(a.stdout)))
	}
	s, err := a.prepare(context.Background(), &f, extra...)
	if err != nil {
		return a.prepareFailed("chat", err)
	}
	defer s.close(a)

	sessionID := f.session
	if sessionID == "" {
		sessionID = newSessionID()
	}
	interactive := a.stdinTTY && !f.json && !f.quiet
	if interactive {
		info := "· " + s.describe
		if f.session != "" {
			info += " · session " + f.session
		}
		fmt.Fprintf(a.stderr, "%s %s\n%s\n", a.style(bold, "runlet chat"), a.style(dim, info),
			a.style(dim, "/reset starts over, /exit or Ctrl-D quits, Ctrl-C stops an answer"))
	}
	if s.demo != nil {
		a.demoNotice("", s.ignored)
		fmt.Fprintln(a.stderr, a.style(dim, "        whatever you type first, the recording answers that question; then it ends."))
	}

	code := exitOK
	for {
		prompt := ""
		if interactive {
			fmt.Fprintln(a.stderr)
			prompt = a.style(bold+cyan, "› ")
		}
		line, err := a.readLine(prompt)
		if err != nil {
			if err != io.EOF {
				fmt.Fprintf(a.stderr, "runlet chat: reading standard input: %v\n", err)
				return exitFailed
			}
			if interactive {
				fmt.Fprintln(a.stderr)
			}
			break
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return code
		case "/reset":
			sessionID = newSessionID()
			fmt.Fprintln(a.stderr, a.style(dim, "new session "+sessionID))
			continue
		case "/help":
			fmt.Fprintln(a.stderr, a.style(dim, "/reset starts a new session, /exit quits; anything else is a prompt"))
			continue
		}
		if s.demo != nil {
			if s.demo.Remaining() == 0 {
				fmt.Fprintln(a.stderr, a.style(dim, "runlet: the recording has ended."))
				break
			}
			line = demo.Question
		}
		code = a.turn(sig, s, &f, line, runlet.WithSession(sessionID))
		switch code {
		case exitInterrupted: // Ctrl-C stopped this answer, not the session
			code = exitOK
		case signalCode(syscall.SIGTERM):
			return code
		}
	}
	if s.demo != nil {
		a.demoEnd()
	}
	return code
}

func newSessionID() string {
	return "chat-" + strings.ToLower(rand.Text()[:10])
}
