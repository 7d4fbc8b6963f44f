package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// lines returns the line reader over standard input, shared by chat and
// approval prompts when there is no line editor.
func (a *app) lines() *bufio.Reader {
	if a.in == nil {
		a.in = bufio.NewReaderSize(a.stdin, 64<<10)
	}
	return a.in
}

// readLine prints prompt on stderr and reads one line of standard input,
// without its line ending. When standard input and standard error are the
// same kind of terminal the line can be edited (arrows, Ctrl-A/E/K/U/W,
// backspace) and earlier lines recalled with up and down, as in a shell;
// Ctrl-D on an empty line (or Ctrl-C) ends the input with io.EOF.
// Otherwise it reads up to the next newline; a last line without one is
// returned with a nil error, then io.EOF.
func (a *app) readLine(prompt string) (string, error) {
	if ed := a.lineEditor(); ed != nil {
		return ed.readLine(prompt)
	}
	if prompt != "" {
		fmt.Fprint(a.stderr, prompt)
	}
	line, err := a.lines().ReadString('\n')
	if err == io.EOF && line != "" {
		err = nil
	}
	return trimEOL(line), err
}

func trimEOL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s = s[:n-1]
		if n := len(s); n > 0 && s[n-1] == '\r' {
			s = s[:n-1]
		}
	}
	return s
}

// editor is a line editor on the terminal: golang.org/x/term's Terminal,
// in raw mode only while it reads a line, so that the answers print as
// usual in between. It keeps the history of the session's lines.
type editor struct {
	fd int
	t  *term.Terminal
}

// lineEditor returns the editor, made on first use, or nil when standard
// input or standard error is not a terminal.
func (a *app) lineEditor() *editor {
	if a.editor != nil || !a.stdinTTY || !a.stderrTTY {
		return a.editor
	}
	in, ok1 := a.stdin.(*os.File)
	out, ok2 := a.stderr.(*os.File)
	if !ok1 || !ok2 {
		return nil
	}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "")
	if w, h, err := term.GetSize(int(out.Fd())); err == nil && w > 0 && h > 0 { // else 80x24
		_ = t.SetSize(w, h)
	}
	a.editor = &editor{fd: int(in.Fd()), t: t}
	return a.editor
}

func (e *editor) readLine(prompt string) (string, error) {
	state, err := term.MakeRaw(e.fd)
	if err != nil {
		return "", fmt.Errorf("setting up the terminal: %w", err)
	}
	defer term.Restore(e.fd, state)
	e.t.SetPrompt(prompt)
	line, err := e.t.ReadLine()
	if errors.Is(err, term.ErrPasteIndicator) { // a pasted line is a line
		err = nil
	}
	return line, err
}
