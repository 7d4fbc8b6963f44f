package runlettest_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// Comparing any recorded body with any sent body either matches or fails
// with a *MismatchError; it never panics. A body always matches itself.
func FuzzReplayCompare(f *testing.F) {
	f.Add(`{"a":[1,2,{"b":null}]}`, `{"a":[1,2,{"b":false}],"c":1}`, "a.*.b")
	f.Add(`[1,2]`, `[1]`, "0")
	f.Add("data: x\n\n", "data: y\n\n", "")
	f.Add(`{"n":1.0}`, `{"n":1}`, "")
	f.Add(`{"x":"\u00e9"}`, "not json", "x")
	f.Fuzz(func(t *testing.T, rec, got, ignore string) {
		c := &runlettest.Cassette{Version: 1, Interactions: []runlettest.Interaction{{
			Request:  runlettest.RecordedRequest{Method: "POST", URL: "http://x/p", Body: runlettest.BodyFrom([]byte(rec))},
			Response: runlettest.RecordedResponse{Status: 200, Body: runlettest.BodyFrom([]byte("ok"))},
		}}}
		try := func(body string) error {
			rep := runlettest.NewReplayer(c, runlettest.IgnoreFields(ignore))
			req, _ := http.NewRequest("POST", "http://y/p", strings.NewReader(body))
			resp, err := rep.RoundTrip(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
			}
			return err
		}
		if err := try(got); err != nil {
			var mm *runlettest.MismatchError
			if !errors.As(err, &mm) || len(mm.Diffs) == 0 {
				t.Fatalf("err = %v", err)
			}
		}
		if err := try(string(runlettest.BodyFrom([]byte(rec)).Bytes())); err != nil {
			t.Fatalf("a recorded body does not match itself: %v", err)
		}
	})
}
