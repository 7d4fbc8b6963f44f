package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/runlet/runlet/runlettest"
)

// writeConfig writes a config for a fake server's model, plus extra.
func writeConfig(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.yaml")
	data := "model: {provider: openai, name: m, base_url: \"${OPENAI_BASE_URL}\", api_key: k}\n" + extra
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// --session keeps history in the config's store:; --store wins over it.
func TestSessionInConfigStore(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Noted: 3pm."}, runlettest.OpenAIChatReply{Text: "At 3pm."})
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "sub", "agent.db")
	cfg := writeConfig(t, "store:\n  sqlite: {path: "+db+"}\n")
	env := []string{"OPENAI_BASE_URL=" + srv.BaseURL()}
	if r := runCLI(t, "", env, "run", "--config", cfg, "--session", "notes", "The meeting is at 3pm."); r.code != 0 {
		t.Fatalf("%s", r)
	}
	if r := runCLI(t, "", env, "run", "--config", cfg, "--session", "notes", "When is the meeting?"); r.code != 0 || r.stdout != "At 3pm.\n" {
		t.Fatalf("%s", r)
	}
	msgs, _ := json.Marshal(srv.Requests()[1].JSON()["messages"])
	if !strings.Contains(string(msgs), "The meeting is at 3pm.") {
		t.Errorf("second run did not see the session: %s", msgs)
	}
	if info, err := os.Stat(filepath.Dir(db)); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("store directory: %v %v", info, err)
	}

	// The flag wins: the session starts afresh in --store's file.
	flagDB := filepath.Join(dir, "flag.db")
	srv.Enqueue(runlettest.OpenAIChatReply{Text: "I do not know."})
	if r := runCLI(t, "", env, "run", "--config", cfg, "--session", "notes", "--store", flagDB, "When is the meeting?"); r.code != 0 {
		t.Fatalf("%s", r)
	}
	if n := len(srv.Requests()[2].JSON()["messages"].([]any)); n != 1 {
		t.Errorf("with --store the run saw %d messages, want only its own", n)
	}
	if _, err := os.Stat(flagDB); err != nil {
		t.Errorf("--store file: %v", err)
	}
}

// A store that cannot be opened fails the command without showing the
// DSN's password; a kind the CLI cannot open is a config error at its line.
func TestConfigStoreErrors(t *testing.T) {
	cfg := writeConfig(t, "store:\n  postgres: {dsn: \"postgres://app:${PGPASS}@127.0.0.1:1/app?connect_timeout=5\"}\n")
	r := runCLI(t, "", []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "PGPASS=SECRET-PW"}, "run", "--config", cfg, "--session", "s", "hi")
	if r.code != exitFailed || !strings.Contains(r.stderr, "store.postgres") || strings.Contains(r.stderr+r.stdout, "SECRET") {
		t.Errorf("%s", r)
	}
	cfg = writeConfig(t, "store:\n  redis: {url: \"redis://:${PGPASS}@127.0.0.1:1/0?dial_timeout=5s\"}\n")
	r = runCLI(t, "", []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "PGPASS=SECRET-PW"}, "run", "--config", cfg, "--session", "s", "hi")
	if r.code != exitFailed || !strings.Contains(r.stderr, "store.redis") || strings.Contains(r.stderr+r.stdout, "SECRET") {
		t.Errorf("%s", r)
	}
	cfg = writeConfig(t, "store:\n  sqlite: {}\n")
	r = runCLI(t, "", []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1"}, "run", "--config", cfg, "hi")
	if r.code != exitUsage || !strings.Contains(r.stderr, "agent.yaml:3:11: store.sqlite: path is required") {
		t.Errorf("%s", r)
	}
}

// mcp serve keeps conversations by session_id in the config's store:.
func TestMCPServeConfigStore(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Noted."}, runlettest.OpenAIChatReply{Text: "Ann."})
	defer srv.Close()
	cfg := writeConfig(t, "name: memo\nstore: memory\n")
	cmd := serveCmd(t, "--config", cfg)
	cmd.Env = cleanEnv(t, "OPENAI_BASE_URL="+srv.BaseURL())
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &sdkmcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, prompt := range []string{"I am Ann.", "Who am I?"} {
		res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "memo", Arguments: map[string]any{"prompt": prompt, "session_id": "s1"}})
		if err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
	}
	msgs, _ := json.Marshal(srv.Requests()[1].JSON()["messages"])
	if !strings.Contains(string(msgs), "I am Ann.") {
		t.Errorf("the second call did not see the session: %s", msgs)
	}
}

// redisURL is $RUNLET_REDIS_URL, else the default address when a server
// answers there; the test skips without one (and fails under CI).
func redisURL(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("RUNLET_REDIS_URL"); u != "" {
		return u
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:6379", 5*time.Second)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no Redis server: %v", err)
		}
		t.Skipf("no Redis server reachable: RUNLET_REDIS_URL is unset and nothing answers at 127.0.0.1:6379 (%v)", err)
	}
	c.Close()
	return "redis://127.0.0.1:6379/0"
}

// store: redis keeps --session history in Redis, under the prefix, with
// the TTL.
func TestSessionInConfigRedis(t *testing.T) {
	url := redisURL(t)
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Noted."}, runlettest.OpenAIChatReply{Text: "Ann."})
	defer srv.Close()
	prefix := fmt.Sprintf("runlet-cli-test-%d:", time.Now().UnixNano())
	cfg := writeConfig(t, "store:\n  redis: {url: \"${TEST_REDIS_URL}\", prefix: \""+prefix+"\", ttl: 1h}\n")
	env := []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "TEST_REDIS_URL=" + url}
	for _, prompt := range []string{"I am Ann.", "Who am I?"} {
		if r := runCLI(t, "", env, "run", "--config", cfg, "--session", "s1", prompt); r.code != 0 {
			t.Fatalf("%s", r)
		}
	}
	msgs, _ := json.Marshal(srv.Requests()[1].JSON()["messages"])
	if !strings.Contains(string(msgs), "I am Ann.") {
		t.Errorf("the second run did not see the session: %s", msgs)
	}
	o, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(o)
	defer c.Close()
	keys, err := c.Keys(t.Context(), prefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys under %s: %v, %v", prefix, keys, err)
	}
	for _, k := range keys {
		if ttl := c.PTTL(t.Context(), k).Val(); ttl <= 0 || ttl > time.Hour {
			t.Errorf("%s: TTL %v, want up to 1h", k, ttl)
		}
	}
	c.Del(t.Context(), keys...)
}
