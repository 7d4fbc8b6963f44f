package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/runlet/runlet/runlettest"
)

// openPTY opens a pseudo-terminal: the controller side, which the test
// types into and reads the screen from, and the terminal side, which the
// child gets as its standard streams.
func openPTY(t *testing.T) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(ctl.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		ctl.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		ctl.Close()
		t.Skipf("ptsname: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ctl.Close()
		t.Skipf("open pts: %v", err)
	}
	return ctl, tty
}

// screen collects what the child writes to the terminal.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{} // signalled on every write
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	select {
	case s.more <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until the screen shows sub n times; the deadline only
// bounds a broken run.
func (s *screen) waitFor(t *testing.T, sub string, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for strings.Count(s.String(), sub) < n {
		select {
		case <-s.more:
		case <-deadline:
			t.Fatalf("the terminal never showed %q %d times:\n%q", sub, n, s.String())
		}
	}
}

// On a terminal, chat edits lines (backspace, cursor keys) and recalls
// earlier ones with the up arrow.
func TestChatLineEditing(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Hello Ann."}, runlettest.OpenAIChatReply{Text: "Hello again."})
	defer srv.Close()
	ctl, tty := openPTY(t)
	defer ctl.Close()

	cmd := exec.Command(bin, "chat", "--base-url", srv.BaseURL(), "--model", "m")
	cmd.Env = cleanEnv(t, "NO_COLOR=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	scr := &screen{more: make(chan struct{}, 1)}
	copied := make(chan struct{})
	go func() { io.Copy(scr, ctl); close(copied) }() // ends with EIO when the child is gone
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	}()

	const prompt = "› "
	scr.waitFor(t, prompt, 1) // the editor is reading, in raw mode
	// "Hi, I am Amn", two backspaces, "nn."; left arrow twice and a
	// deletion fix nothing but prove the cursor moves: "Hi, I am Ann.".
	io.WriteString(ctl, "Hi, I am Amn\x7f\x7fnn.x\x1b[D\x1b[C\x7f\r")
	scr.waitFor(t, "Hello Ann.", 1)
	scr.waitFor(t, prompt, 2)
	io.WriteString(ctl, "\x1b[A\r") // up arrow: the line before, again
	scr.waitFor(t, "Hello again.", 1)
	scr.waitFor(t, prompt, 3)
	io.WriteString(ctl, "\x04") // Ctrl-D quits

	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("chat: %v\n%q", waitErr, scr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("chat did not quit on Ctrl-D:\n%q", scr.String())
	}
	ctl.Close()
	<-copied

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests\n%q", len(reqs), scr.String())
	}
	for i, want := range []int{1, 2} {
		msgs := reqs[i].JSON()["messages"].([]any)
		n := 0
		for _, m := range msgs {
			if m := m.(map[string]any); m["role"] == "user" {
				if m["content"] != "Hi, I am Ann." {
					t.Errorf("request %d: user message %q", i+1, m["content"])
				}
				n++
			}
		}
		if n != want {
			t.Errorf("request %d has %d user messages, want %d", i+1, n, want)
		}
	}
}
