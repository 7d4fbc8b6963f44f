package runlet_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A tool abandoned after its timeout may still read RunInfoFrom while the
// run goes on to its next turn: what it reads is a consistent snapshot, and
// under -race the read and the run's update of the turn do not race.
func TestRunInfoFromAbandonedTool(t *testing.T) {
	stop, done := make(chan struct{}), make(chan struct{})
	turns := make(chan int, 1)
	slow := runlet.NewTool("slow", "Ignores its context.", func(ctx context.Context, _ struct{}) (string, error) {
		defer close(done)
		last := 0
		for {
			select {
			case <-stop:
				turns <- last
				return "late", nil
			default:
			}
			if ri, ok := runlet.RunInfoFrom(ctx); ok {
				last = ri.Turn
			}
			runtime.Gosched()
		}
	}, runlet.WithToolTimeout(time.Millisecond))
	agent := &runlet.Agent{Name: "a", Tools: []runlet.Tool{slow}, Model: runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "slow", `{}`)),
		runlettest.TextReply("done"),
	)}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "go")
	close(stop)
	<-done
	if err != nil || res.Output != "done" || res.Turns != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	if last := <-turns; last != 1 && last != 2 {
		t.Errorf("the abandoned tool read turn %d", last)
	}
}
