package compaction

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/session"
)

// FuzzReadMarker feeds arbitrary JSON-decoded values (what a database
// round-trip can hand back) and raw strings to ReadMarker and View: no
// panic, invalid records hide nothing, valid ones survive re-encoding.
func FuzzReadMarker(f *testing.F) {
	good, err := sampleMarker().Map()
	if err != nil {
		f.Fatal(err)
	}
	b, _ := json.Marshal(good)
	f.Add(b)
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`"text"`))
	f.Add([]byte(`{"startTimestamp":2,"endTimestamp":1,"firstEventId":"e1","lastEventId":"e2","eventCount":1,"compactedContent":{"parts":[{"text":"x"}]}}`))
	f.Add([]byte(`{"startTimestamp":1e308,"endTimestamp":1e308,"firstEventId":"e1","lastEventId":"e1","eventCount":1e20,"compactedContent":{"parts":[{"text":"x"},null]}}`))
	f.Add([]byte(`{"startTimestamp":1767323045,"endTimestamp":1767323046,"firstEventId":"e2","lastEventId":"e1","eventCount":2,"edgeEventIds":[null,1],"compactedContent":{"parts":[{"text":"s"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e1, e2 := ev("e1", 1), ev("e2", 2)
		var decoded any
		records := []any{string(data)}
		if json.Unmarshal(data, &decoded) == nil {
			records = append(records, decoded)
		}
		if m, ok := decoded.(map[string]any); ok {
			checkFastPath(t, m)
		}
		for _, rec := range records {
			me := rawMarker("M", 3, rec)
			m, err := ReadMarker(me)
			view := View([]*session.Event{e1, e2, me}, nil)
			for _, e := range view {
				if IsCompactionEvent(e) {
					t.Fatalf("marker in view")
				}
			}
			if errors.Is(err, ErrNoMarker) {
				// A nil record: not a marker, an ordinary (empty) event.
				if diff := cmp.Diff([]string{"e1", "e2", "M"}, describe(view)); diff != "" {
					t.Fatalf("nil record changed the view:\n%s", diff)
				}
				continue
			}
			if err != nil {
				if diff := cmp.Diff([]string{"e1", "e2"}, describe(view)); diff != "" {
					t.Fatalf("invalid marker (%v) changed the view:\n%s", err, diff)
				}
				continue
			}
			// A valid marker survives re-encoding unchanged.
			again, err := ReadMarker(NewMarkerEvent(m, "inv", e2.Timestamp))
			if err != nil {
				t.Fatalf("re-encoded marker does not parse: %v", err)
			}
			if diff := cmp.Diff(m, again); diff != "" {
				t.Fatalf("re-encoding changed the marker (-first +second):\n%s", diff)
			}
		}
	})
}

// checkFastPath asserts the map fast path and the encoding/json path agree.
func checkFastPath(t *testing.T, v map[string]any) {
	t.Helper()
	w, ok := fastWire(v)
	if !ok {
		return
	}
	fast, fastErr := fromWire(w, "M")
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("fast path accepted an unencodable map: %v", err)
	}
	slow, slowErr := parseMarker(json.RawMessage(data), "M")
	if (fastErr == nil) != (slowErr == nil) {
		t.Fatalf("fast path error %v, json path error %v", fastErr, slowErr)
	}
	if diff := cmp.Diff(slow, fast); diff != "" {
		t.Fatalf("fast path differs from json path (-json +fast):\n%s", diff)
	}
}
