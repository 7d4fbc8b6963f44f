package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// echoSecret is a credential no error may show any 8 characters of.
const echoSecret = "ghp_Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7"

func noSecret(t *testing.T, where string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", where)
	}
	s := fmt.Sprintf("%v %+v %#v", err, err, err)
	// The Basic credentials net/http sends for "me:<secret>" user info.
	basic := base64.StdEncoding.EncodeToString([]byte("me:" + echoSecret))
	for _, sec := range []string{echoSecret, basic} {
		for i := 0; i+8 <= len(sec); i++ {
			if strings.Contains(s, sec[i:i+8]) {
				t.Errorf("%s: error shows the credential: %s", where, s)
				return
			}
		}
	}
}

// A server that echoes the request (its URL's ?token=, its headers, the
// Basic credentials of the URL's user info) in a JSON-RPC error does not
// get the client's credentials into the error Connect returns; nor does a
// URL that does not parse, nor an environment variable's value a command
// echoes.
func TestErrorsHideServerCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if len(req.ID) == 0 {
			req.ID = json.RawMessage("0")
		}
		w.Header().Set("Content-Type", "application/json")
		msg, _ := json.Marshal(fmt.Sprintf("rejected %s %v", r.URL.RequestURI(), r.Header))
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`, req.ID, msg)
	}))
	defer srv.Close()
	userinfo := strings.Replace(srv.URL, "http://", "http://me:"+echoSecret+"@", 1)
	for name, cfg := range map[string]ServerConfig{
		"query":        {URL: srv.URL + "/mcp?token=" + echoSecret},
		"header":       {URL: srv.URL + "/mcp", Headers: map[string]string{"X-Token": echoSecret}},
		"bearer":       {URL: srv.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer " + echoSecret}},
		"user info":    {URL: userinfo + "/mcp"},
		"control char": {URL: userinfo + "/mcp\x7f"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ts, err := Connect(ctx, cfg, WithRetry(1, 0))
		cancel()
		if ts != nil {
			ts.Close()
		}
		noSecret(t, name, err)
	}
	cfg := ServerConfig{Command: "server", Env: map[string]string{"GITHUB_TOKEN": echoSecret, "MODE": "fast"}}
	err := cfg.redact(errors.New("server said: bad token " + echoSecret + " in mode fast"))
	noSecret(t, "env", err)
	if !strings.Contains(err.Error(), "mode fast") {
		t.Errorf("masked an ordinary value: %v", err)
	}
}
