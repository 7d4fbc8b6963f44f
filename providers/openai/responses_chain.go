package openai

import (
	"strings"
	"sync"

	"github.com/runlet/runlet"
)

// respChain remembers which response produced which function call and
// reasoning item, for previous_response_id "auto". It is bounded: the
// oldest entries are forgotten first.
type respChain struct {
	mu    sync.Mutex
	ids   map[string]string // item ID -> response ID
	order []string          // ring of item IDs, oldest at next
	next  int
}

const respChainMax = 4096

// record notes the items of a response.
func (c *respChain) record(responseID string, msg runlet.Message) {
	if responseID == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range msg.Parts {
		var key string
		switch p := p.(type) {
		case runlet.ToolCallPart:
			key = p.Provider + "\x00" + p.ItemID
			if p.ItemID == "" {
				continue
			}
		case runlet.ReasoningPart:
			key = p.Provider + "\x00" + p.ID
			if p.ID == "" {
				continue
			}
		default:
			continue
		}
		if c.ids == nil {
			c.ids = make(map[string]string)
		}
		if _, ok := c.ids[key]; !ok {
			if len(c.order) < respChainMax {
				c.order = append(c.order, key)
			} else {
				delete(c.ids, c.order[c.next])
				c.order[c.next] = key
				c.next = (c.next + 1) % respChainMax
			}
		}
		c.ids[key] = responseID
	}
}

// lookup finds the response that produced the last assistant message and
// returns its ID and the index of the first message after that message.
func (c *respChain) lookup(provider string, msgs []runlet.Message) (string, int, bool) {
	n := respAfterLastAssistant(msgs)
	if n == 0 {
		return "", 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range msgs[n-1].Parts {
		var key string
		switch p := p.(type) {
		case runlet.ToolCallPart:
			key = p.Provider + "\x00" + p.ItemID
		case runlet.ReasoningPart:
			key = p.Provider + "\x00" + p.ID
		default:
			continue
		}
		if !strings.HasPrefix(key, provider+"\x00") {
			continue
		}
		if id, ok := c.ids[key]; ok {
			return id, n, true
		}
	}
	return "", 0, false
}

// remember records a response for automatic chaining when it was stored.
func (m *Responses) remember(b respBuilt, resp *runlet.ModelResponse) {
	if b.auto && b.store && resp != nil {
		m.chain.record(resp.ID, resp.Message)
	}
}
