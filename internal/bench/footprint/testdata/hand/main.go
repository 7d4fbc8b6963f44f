// Command hand is the hand-written net/http program of the footprint
// comparison (see ../../measure.sh): the same job as ../agent without a
// framework (one provider, one tool, no streaming, retries or events).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
)

type message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

var tools = json.RawMessage(`[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}]`)

func main() {
	if os.Getenv("FOOTPRINT_EXIT") != "" {
		return
	}
	out, err := run(os.Getenv("OPENAI_BASE_URL"), os.Getenv("OPENAI_API_KEY"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(out)
}

func run(base, key string) (string, error) {
	sys, user := "Be brief.", "Weather in Shanghai?"
	msgs := []message{{Role: "system", Content: &sys}, {Role: "user", Content: &user}}
	for range 10 {
		body, err := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs, "tools": tools})
		if err != nil {
			return "", err
		}
		req, err := http.NewRequest(http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		var out struct {
			Choices []struct {
				Message struct {
					Content   string     `json:"content"`
					ToolCalls []toolCall `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK || len(out.Choices) == 0 {
			return "", fmt.Errorf("status %s", resp.Status)
		}
		m := out.Choices[0].Message
		if len(m.ToolCalls) == 0 {
			return m.Content, nil
		}
		msgs = append(msgs, message{Role: "assistant", ToolCalls: m.ToolCalls})
		for _, c := range m.ToolCalls {
			var args struct {
				City string `json:"city"`
			}
			if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
				return "", err
			}
			result := "sunny in " + args.City
			msgs = append(msgs, message{Role: "tool", Content: &result, ToolCallID: c.ID})
		}
	}
	return "", errors.New("too many turns")
}
