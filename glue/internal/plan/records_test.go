package plan

import (
	"encoding/json"
	"testing"

	. "github.com/adkctx/adkctx/compaction"
)

// A Viewer parses a marker record once per id while the record stays equal, and parses it again
// whenever anything in it differs: a record is never served for another one, whatever its id.
func TestViewerParsesEachRecordOnce(t *testing.T) {
	m := v2(1, "", "Goal: keep the build green.", "e1", "e2")
	md, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	rec := md[MetadataKey].(map[string]any)
	text, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	changed := func(f func(map[string]any)) any {
		cp, _, ok := copyRecord(rec, 0)
		if !ok {
			t.Fatal("the record does not copy")
		}
		f(cp.(map[string]any))
		return cp
	}
	v := NewViewer(nil)
	read := func(t *testing.T, raw any) *Marker {
		t.Helper()
		got, _, err := v.readMarker(&Event{ID: "m1", Metadata: map[string]any{MetadataKey: raw}})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := read(t, rec)
	for _, tc := range []struct {
		name string
		raw  any
		same bool // served from the first parse
	}{
		{"the same map", rec, true},
		{"an equal copy", changed(func(map[string]any) {}), true},
		{"another summary", changed(func(r map[string]any) {
			r["compactedContent"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"] = "Goal: other."
		}), false},
		{"one id more", changed(func(r map[string]any) { r["eventIds"], r["eventCount"] = append(r["eventIds"].([]any), "e3"), 3.0 }), false},
		{"a number of another bit pattern", changed(func(r map[string]any) { r["startTimestamp"] = r["startTimestamp"].(float64) + 1e-6 }), false},
		{"a field more", changed(func(r map[string]any) { r["extra"] = true }), false},
		{"the record as JSON text", string(text), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := read(t, tc.raw)
			if (got == first) != tc.same {
				t.Errorf("served from the first parse: %v, want %v", got == first, tc.same)
			}
			if !tc.same {
				first = read(t, rec) // parsed again: the cache held the other record
			}
		})
	}
	// The copy kept is the Viewer's: changing the caller's map afterwards changes nothing served.
	own := changed(func(map[string]any) {}).(map[string]any)
	kept := read(t, own)
	own["eventCount"] = float64(5)
	if again := read(t, own); again == kept || again.EventCount != 5 {
		t.Errorf("after the caller changed its record: eventCount %d (same marker %v), want 5 from a new parse", again.EventCount, again == kept)
	}
	// A value that is not a JSON value is parsed every time (never compared, never kept).
	odd := changed(func(r map[string]any) { r["extra"] = 3 })
	if a, b := read(t, odd), read(t, odd); a == b {
		t.Error("a record holding an int was served from the cache")
	}
}
