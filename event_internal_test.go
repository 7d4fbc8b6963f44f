package runlet

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestEventTypesDecode checks the decoding table: every listed event has
// its own name and decodes back to its own type, header included.
func TestEventTypesDecode(t *testing.T) {
	if len(eventTypes) != len(events) {
		t.Fatalf("%d names for %d event types: a name is used twice", len(eventTypes), len(events))
	}
	for _, ev := range events {
		v := reflect.New(reflect.TypeOf(ev).Elem()).Interface().(Event)
		*v.Header() = EventHeader{Type: v.eventType(), RunID: "r", Seq: 3}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalEvent(b)
		if err != nil {
			t.Fatalf("%s: %v", v.eventType(), err)
		}
		if reflect.TypeOf(back) != reflect.TypeOf(v) || *back.Header() != *v.Header() {
			t.Errorf("%s decodes as %T %+v", v.eventType(), back, *back.Header())
		}
	}
}
