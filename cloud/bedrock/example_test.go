package bedrock_test

import (
	"context"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

// An agent on Bedrock. Here it talks to bedrocktest's fake, which checks
// the SigV4 signature of every request; against Bedrock itself, leave
// BaseURL and Credentials unset and the AWS SDK's credential chain signs.
func ExampleNew() {
	srv := bedrocktest.NewServer(runlettest.WireReply{Text: "Paris."})
	defer srv.Close()

	ctx := context.Background()
	model, err := bedrock.New(ctx, bedrock.Config{
		Model:       "us.amazon.nova-micro-v1:0",
		Region:      bedrocktest.Region,
		BaseURL:     srv.URL,           // omit for https://bedrock-runtime.{region}.amazonaws.com
		Credentials: srv.Credentials(), // omit for the default chain
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := &runlet.Agent{Name: "geo", Instructions: "Answer in one word.", Model: model}
	res, err := runlet.NewRuntime().Run(ctx, agent, "Capital of France?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output)
	// Output: Paris.
}
