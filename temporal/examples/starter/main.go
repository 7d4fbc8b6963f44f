// Command starter starts a durable run of the example worker's agent, asks
// you on the terminal to approve each postcard, and prints the result (see
// ../README.md).
//
//	go run ./examples/starter -address 127.0.0.1:7233 -namespace default "Send Grandma a postcard about the weather in Paris."
//
// The run outlives the starter: stop it (or the worker) at any time, and
// -id with the same workflow ID picks the run up again.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/temporal"
	"go.temporal.io/sdk/client"
)

func main() {
	address := flag.String("address", "127.0.0.1:7233", "Temporal frontend host:port")
	namespace := flag.String("namespace", "default", "Temporal namespace")
	id := flag.String("id", fmt.Sprintf("postcards-%d", time.Now().Unix()), "workflow ID: the run's durable name")
	flag.Parse()
	input := strings.Join(flag.Args(), " ")
	if input == "" {
		input = "Send Grandma a postcard about the weather in Paris."
	}

	c, err := client.Dial(client.Options{HostPort: *address, Namespace: *namespace})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	run, err := temporal.Start(ctx, c, client.StartWorkflowOptions{
		ID:        *id,
		TaskQueue: "runlet-example",
	}, temporal.RunInput{Agent: "postcards", Input: input}) // an existing run with this ID is picked up
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("workflow", run.GetID())

	done := make(chan struct{})
	var res *runlet.Result
	go func() {
		res, err = temporal.Wait(ctx, run)
		close(done)
	}()
	in := bufio.NewScanner(os.Stdin)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("%s\n(%d turns, %d tokens)\n", res.Output, res.Turns, res.Usage.TotalTokens)
			return
		case <-tick.C:
		}
		pending, perr := temporal.Pending(ctx, c, run.GetID())
		if perr != nil || len(pending) == 0 {
			continue
		}
		var decisions []runlet.Decision
		for _, call := range pending {
			fmt.Printf("approve %s %s? [y/N] ", call.Name, call.Arguments)
			if in.Scan() && strings.HasPrefix(strings.ToLower(in.Text()), "y") {
				decisions = append(decisions, runlet.Approve(call.ID))
			} else {
				decisions = append(decisions, runlet.Reject(call.ID, "the user said no"))
			}
		}
		if err := temporal.Decide(ctx, c, run.GetID(), decisions...); err != nil {
			log.Fatal(err)
		}
	}
}
