package runlet

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// KeepLastTurns keeps the last n turns of the conversation (a turn starts at
// a user message and runs to the next one), dropping older ones.
func KeepLastTurns(n int) Preparer {
	return PreparerFunc(func(ctx context.Context, req *ModelRequest) error {
		starts := turnStarts(req.Messages)
		if n <= 0 || len(starts) <= n {
			return nil
		}
		cut := starts[len(starts)-n]
		req.Messages = req.Messages[cut:]
		NotePrepared(ctx, fmt.Sprintf("kept the last %d turns, dropped %d messages", n, cut), 0)
		return nil
	})
}

// KeepLastMessages keeps at most n messages of the conversation, dropping
// the oldest whole turns (a turn starts at a user message and runs to the
// next one), so a tool call is never separated from its result and the
// window starts with a user message. The newest turn is always kept whole,
// even when it alone holds more than n messages (a run with many tool
// calls): n bounds the history before it, not the run in progress.
func KeepLastMessages(n int) Preparer {
	return PreparerFunc(func(ctx context.Context, req *ModelRequest) error {
		msgs := req.Messages
		if n <= 0 || len(msgs) <= n {
			return nil
		}
		starts := turnStarts(msgs)
		if len(starts) == 0 {
			return nil
		}
		// The newest turn, then older ones while the window stays within n.
		cut := starts[len(starts)-1]
		for i := len(starts) - 2; i >= 0 && len(msgs)-starts[i] <= n; i-- {
			cut = starts[i]
		}
		if cut == 0 {
			return nil
		}
		req.Messages = msgs[cut:]
		NotePrepared(ctx, fmt.Sprintf("kept the last %d of at most %d messages, dropped %d", len(msgs)-cut, n, cut), 0)
		return nil
	})
}

// EstimateTokens is TokenBudget's default estimate of a message's tokens: about one token per four
// bytes of text, arguments and results (one per character for text outside
// ASCII, which tokenizes denser), plus a small per-message and per-part
// overhead, and a flat 1,000 tokens per image or file. It errs on the high
// side; plug in a real tokenizer for precision.
func EstimateTokens(m Message) int {
	n := 4
	for _, p := range m.Parts {
		n += 3
		switch p := p.(type) {
		case TextPart:
			n += textTokens(p.Text)
		case ReasoningPart:
			n += textTokens(p.Text) + (len(p.Encrypted)+len(p.Details))/4
		case ToolCallPart:
			n += textTokens(p.Name) + textTokens(string(p.Arguments))
		case ToolResultPart:
			n += textTokens(p.Content)
		case ImagePart, FilePart:
			n += 1000
		case HostedToolPart:
			n += textTokens(string(p.Input)) + textTokens(p.Output) + len(p.Raw)/4
		}
	}
	return n
}

func textTokens(s string) int {
	runes := utf8.RuneCountInString(s)
	if runes == len(s) {
		return (len(s) + 3) / 4
	}
	return max((len(s)+3)/4, runes)
}

// TokenBudget keeps the request within max input tokens by dropping the
// oldest whole turns. The estimate is anchored on what the provider
// reported: the previous call's input tokens plus an estimate of what was
// added since (estimated with est, or EstimateTokens if nil). On the first
// call, or after a change of the kept window, it estimates everything,
// instructions and tool schemas included. If even the newest turn does not
// fit it fails with ErrContextOverflow.
func TokenBudget(max int, est func(Message) int) Preparer {
	if est == nil {
		est = EstimateTokens
	}
	return PreparerFunc(func(ctx context.Context, req *ModelRequest) error {
		msgs := req.Messages
		info, _ := RunInfoFrom(ctx)
		from := 0
		var total int
		if info.prevInputTokens > 0 && info.prevMessages <= len(msgs) && info.prevKeptFrom <= info.prevMessages {
			// Anchor: the previous request (messages[prevKeptFrom:prevMessages]
			// plus instructions and tools) cost prevInputTokens.
			from = info.prevKeptFrom
			total = info.prevInputTokens
			for _, m := range msgs[info.prevMessages:] {
				total += est(m)
			}
		} else {
			total = textTokens(req.Instructions)
			for _, t := range req.Tools {
				b, _ := json.Marshal(t)
				total += textTokens(string(b))
			}
			for _, m := range msgs {
				total += est(m)
			}
		}
		if total <= max && from == 0 {
			NotePrepared(ctx, "", total)
			return nil
		}
		starts := turnStarts(msgs)
		// Turn starts at or after the anchored window; drop turns until it fits.
		i := 0
		for i < len(starts) && starts[i] < from {
			i++
		}
		if i == len(starts) {
			return fmt.Errorf("%w: no turn boundary to cut at", ErrContextOverflow)
		}
		cut := starts[i]
		for total > max {
			if i+1 >= len(starts) {
				return fmt.Errorf("%w: the newest turn needs about %d tokens, over the budget of %d", ErrContextOverflow, total, max)
			}
			for _, m := range msgs[cut:starts[i+1]] {
				total -= est(m)
			}
			i++
			cut = starts[i]
		}
		if cut > 0 {
			req.Messages = msgs[cut:]
			NotePrepared(ctx, fmt.Sprintf("token budget %d: dropped %d oldest messages", max, cut), total)
		} else {
			NotePrepared(ctx, "", total)
		}
		return nil
	})
}

// SummarizerConfig configures Summarizer.
type SummarizerConfig struct {
	// Model writes the summaries (typically a cheaper one); required.
	Model Model
	// Keep is how many recent turns stay verbatim (default 4).
	Keep int
	// Batch is how many extra turns accumulate before summarising again
	// (default 4), so the summary is not rewritten on every turn.
	Batch int
	// Prompt is the instruction given to Model (a sensible default if empty).
	Prompt string
	// Name tells apart Summarizers sharing a session's state (default
	// "default"). A stored summary is reused only by a Summarizer with the
	// same Name, Prompt and Go type of Model: change Name when you switch
	// Model to another model of the same provider and want the old
	// model's summaries rewritten.
	Name string
	// NoStore keeps summaries only in this process's memory, not in the
	// session's state (see Summarizer).
	NoStore bool
}

// Summarizer returns a Preparer that replaces all but the last Keep turns
// with a summary written by cfg.Model, once there are more than Keep+Batch
// turns. Summaries are cached per session (or per run without one) and
// extended incrementally, so a summary is not recomputed on every call. Its
// calls count in the run's usage and limits under the purpose "summarize"
// (see CallModel).
//
// In a run with a session (WithSession), the summary is also kept in the
// session's key-value state (under "runlet.summarizer/" + Name), so a later
// run of the session, in this process or another one over the same store,
// reuses it instead of paying for it again; set NoStore to opt out. The
// stored row carries a SHA-256 of the summarised messages' JSON and of the
// summariser's configuration: a row that does not match the history and
// configuration at hand, or that is malformed or over 256 KiB, is ignored
// and the summary recomputed (noted in the context.prepared event). The
// check catches a changed history, not a forgery: whoever can write the
// store can write a summary just as they can write the session's history,
// so a stored summary is trusted exactly as much as the session itself.
func Summarizer(cfg SummarizerConfig) Preparer {
	if cfg.Keep <= 0 {
		cfg.Keep = 4
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 4
	}
	if cfg.Prompt == "" {
		cfg.Prompt = defaultSummaryPrompt
	}
	if cfg.Name == "" {
		cfg.Name = "default"
	}
	return &summarizer{cfg: cfg}
}

type summarizer struct {
	cfg   SummarizerConfig
	mu    sync.Mutex
	cache map[string]summary // session or run ID -> summary
}

type summary struct {
	upTo int      // number of history messages summarised
	hash [32]byte // of those messages, to notice a different history
	text string
}

const defaultSummaryPrompt = "Summarise the conversation so far for the assistant that will continue it. Keep facts, names, numbers, decisions, open questions and tool results that still matter. Be concise; write plain prose."

func (s *summarizer) Prepare(ctx context.Context, req *ModelRequest) error {
	keep, batch := s.cfg.Keep, s.cfg.Batch
	msgs := req.Messages
	starts := turnStarts(msgs)
	info, _ := RunInfoFrom(ctx)
	key := info.SessionID
	if key == "" {
		key = "run:" + info.RunID
	}
	s.mu.Lock()
	cached, ok := s.cache[key]
	s.mu.Unlock()
	if ok && (cached.upTo > len(msgs) || hashMessages(msgs[:cached.upTo]) != cached.hash) {
		ok = false
	}
	persist := s.persists(ctx)
	if !ok && persist && len(starts) > keep+batch {
		// Another process (or an earlier Runtime) may have summarised
		// this session already.
		cached, ok = s.load(ctx, msgs, starts)
		if ok {
			s.remember(key, cached)
		}
	}
	// Turns not yet summarised: all of them, or those after the summary.
	fresh := len(starts)
	if ok {
		fresh -= sort.SearchInts(starts, cached.upTo)
	}
	var cut int
	switch {
	case fresh > keep+batch:
		cut = starts[len(starts)-keep]
	case ok:
		cut = cached.upTo // reuse the summary we have
	default:
		return nil
	}
	text := ""
	if ok && cached.upTo == cut {
		text = cached.text
	} else {
		prev, from := "", 0
		if ok && cached.upTo < cut {
			prev, from = cached.text, cached.upTo
		}
		var err error
		if text, err = s.summarize(ctx, prev, msgs[from:cut]); err != nil {
			return fmt.Errorf("runlet: summarising history: %w", err)
		}
		sum := summary{upTo: cut, hash: hashMessages(msgs[:cut]), text: text}
		s.remember(key, sum)
		if persist {
			s.save(ctx, sum)
		}
	}
	out := make([]Message, 0, len(msgs)-cut+1)
	out = append(out, UserText("Summary of the earlier conversation:\n"+text))
	req.Messages = append(out, msgs[cut:]...)
	NotePrepared(ctx, fmt.Sprintf("summarised %d older messages", cut), 0)
	return nil
}

// remember caches sum in memory under key (a session or run).
func (s *summarizer) remember(key string, sum summary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = make(map[string]summary)
	}
	if len(s.cache) > 10000 {
		clear(s.cache)
	}
	s.cache[key] = sum
}

func (s *summarizer) summarize(ctx context.Context, prev string, msgs []Message) (string, error) {
	var b strings.Builder
	if prev != "" {
		b.WriteString("Earlier summary:\n")
		b.WriteString(prev)
		b.WriteString("\n\nConversation since:\n")
	}
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case TextPart:
				fmt.Fprintf(&b, "%s: %s\n", m.Role, p.Text)
			case ToolCallPart:
				fmt.Fprintf(&b, "%s called %s(%s)\n", m.Role, p.Name, p.Arguments)
			case ToolResultPart:
				fmt.Fprintf(&b, "tool %s returned: %s\n", p.Name, p.Content)
			case HostedToolPart:
				fmt.Fprintf(&b, "%s: %s\n", m.Role, p.Text())
			}
		}
	}
	resp, err := CallModel(ctx, "summarize", s.cfg.Model, &ModelRequest{Instructions: s.cfg.Prompt, Messages: []Message{UserText(b.String())}})
	if err != nil {
		return "", err
	}
	return resp.Message.Text(), nil
}

func hashMessages(msgs []Message) [32]byte {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, m := range msgs {
		_ = enc.Encode(m)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}
