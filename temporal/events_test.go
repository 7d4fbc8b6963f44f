package temporal

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/runlet/runlet"
)

// TestEventTypeNames checks the type names header stamps against Runlet's:
// each event, marshalled, decodes back to its own Go type.
func TestEventTypeNames(t *testing.T) {
	for _, ev := range []runlet.Event{
		&runlet.RunStarted{}, &runlet.RunResumed{}, &runlet.StateChanged{},
		&runlet.ToolStarted{}, &runlet.ToolFinished{}, &runlet.RunInterrupted{},
		&runlet.RunFinished{}, &runlet.RunFailed{},
	} {
		if header(ev).Type == "" {
			t.Fatalf("%T: no type name", ev)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := runlet.UnmarshalEvent(b)
		if err != nil {
			t.Fatalf("%T: %v", ev, err)
		}
		if reflect.TypeOf(back) != reflect.TypeOf(ev) {
			t.Errorf("%s decodes as %T, want %T", ev.Header().Type, back, ev)
		}
	}
}
