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
	"iter"
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
	stream := flag.String("stream", "http://127.0.0.1:7280/", "the worker's token stream (its -stream address); empty: none")
	payloads := flag.String("payloads", "", "the worker's -payloads directory, to read results kept there back into the result")
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
	if *stream != "" {
		// Subscribe first, then start: no token is missed. The tokens are
		// printed as the worker's model activity receives them.
		deltas, err := temporal.SubscribeHTTP(ctx, *stream, *id)
		if err != nil {
			log.Printf("no token stream (%v); the answer comes at the end", err)
		} else {
			go printTokens(deltas)
		}
	}
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
		var stores []temporal.PayloadStore
		if *payloads != "" {
			s, serr := temporal.NewDirPayloadStore(*payloads)
			if serr != nil {
				log.Fatal(serr)
			}
			stores = append(stores, s)
		}
		res, err = temporal.Wait(ctx, run, stores...)
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

// printTokens prints the text of every model call as it streams, the
// turn's attempt starting over when the call was retried.
func printTokens(deltas iter.Seq2[temporal.Delta, error]) {
	attempt := map[int]int32{}
	printed := false // text of this model call so far
	for d, err := range deltas {
		if err != nil {
			log.Print(err)
			return
		}
		if a, ok := attempt[d.Turn]; ok && d.Attempt > a {
			fmt.Printf("\n[turn %d again, attempt %d]\n", d.Turn, d.Attempt)
		}
		attempt[d.Turn] = d.Attempt
		switch d.Kind {
		case temporal.DeltaText:
			fmt.Print(d.Text)
			printed = true
		case temporal.DeltaEnd:
			if printed {
				fmt.Println()
			}
			printed = false
		}
	}
}
