package runlettest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

const leakKey = "sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2Ui4Op6"

func assertNoKeyFragment(t *testing.T, where string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", where)
	}
	texts := []string{err.Error(), fmt.Sprintf("%+v %#v", err, err)}
	var pe *runlet.ProviderError
	if errors.As(err, &pe) {
		texts = append(texts, pe.Provider, pe.Message, pe.Code, pe.Type, pe.RequestID)
		if pe.Err != nil {
			texts = append(texts, pe.Err.Error())
		}
	}
	all := strings.Join(texts, "\n")
	for i := 0; i+8 <= len(leakKey); i++ {
		if strings.Contains(all, leakKey[i:i+8]) {
			t.Errorf("%s: %q of the key survives: %s", where, leakKey[i:i+8], all)
			return
		}
	}
}

// Every adapter redacts its key before a message is shortened, in every
// ProviderError field, wherever a server echoes it: an error body cut
// where the key starts, a header, a stream error event, a 200 body.
func TestNoPartOfTheKeyInAnyError(t *testing.T) {
	pad := strings.Repeat("x", 480) // the key straddles the 500-byte message cut
	for _, c := range wireCases(t) {
		model := wireModel(c.name, c.srv.BaseURL(), leakKey, 0)
		req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}
		faults := map[string]runlettest.Fault{
			"html page cut mid-key":    {Status: 502, Body: "<html><body>" + pad + " " + leakKey + "</body></html>"},
			"json fields":              {Status: 401, Body: `{"type":"error","error":{"type":"` + leakKey[:30] + `","message":"bad key ` + pad + leakKey + `","code":"` + leakKey[20:] + `"}}`},
			"request id header":        {Status: 500, Header: http.Header{"X-Request-Id": {leakKey}, "Request-Id": {leakKey}}, Body: "{}"},
			"a prefix of the key only": {Status: 403, Body: "key " + leakKey[:len(leakKey)/2] + "… is not allowed"},
		}
		for name, f := range faults {
			for _, stream := range []bool{false, true} {
				c.srv.InjectFault(f)
				var err error
				if stream {
					for _, e := range model.Stream(context.Background(), req) {
						if e != nil {
							err = e
						}
					}
				} else {
					_, err = model.Generate(context.Background(), req)
				}
				assertNoKeyFragment(t, fmt.Sprintf("%s/%s/stream=%v", c.name, name, stream), err)
			}
		}
		// An error event inside a 200 stream, and a 200 body holding an error.
		c.srv.EnqueueReplies(runlettest.WireReply{Text: "partial answer", ErrorAfter: 3,
			Error: &runlettest.WireError{Type: "server_error", Message: pad + leakKey}})
		var err error
		for _, e := range model.Stream(context.Background(), req) {
			if e != nil {
				err = e
			}
		}
		assertNoKeyFragment(t, c.name+"/stream error event", err)
		c.srv.EnqueueReplies(runlettest.WireReply{Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"` + leakKey + `"}}`)})
		_, err = model.Generate(context.Background(), req)
		assertNoKeyFragment(t, c.name+"/200 error body", err)
	}
}
