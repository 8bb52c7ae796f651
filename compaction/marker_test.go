package compaction

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/record"
)

// fullMarker is a version 2 marker with every field the compactor writes set.
func fullMarker() *Marker {
	return &Marker{
		Seq: 3, Previous: "m2", EventIDs: []string{"e7", "e8", "e9"}, Scope: "sub",
		StartTimestamp: 1767225600.000001, EndTimestamp: 1767225700.5,
		CompactedContent: genai.NewContentFromText("Goal: ship v2", genai.RoleUser),
		Ledger: &Ledger{Goal: "ship v2", Tools: map[string]int{"read_file": 3},
			Paths: map[string]map[string]int{"a/b.go": {"read_file": 3}}, Events: 9, Invocations: 4},
		FirstEventID: "e1", LastEventID: "e9", FirstInvocationID: "i1", LastInvocationID: "i4",
		EventCount: 9, Invocations: 4, KeepInvocations: 2,
		OriginalTokens: 900, CompactedTokens: 30, CompressionRatio: 30,
		Trigger: TriggerTokens, Summarizer: "extractive", Version: 2,
		ExcerptedEventIDs: []string{"e11"}, ExcerptBytes: 1024,
	}
}

// dbRoundTrip is what a database session service hands back for a record: JSON decoded into
// map[string]any (float64 numbers, []any lists).
func dbRoundTrip(t testing.TB, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMarkerRecordRoundTrip(t *testing.T) {
	want := fullMarker()
	md, err := want.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := md[MetadataKey].(map[string]any)
	if !ok {
		t.Fatalf("metadata[%q] is %T, want map[string]any", MetadataKey, md[MetadataKey])
	}
	// The stored map is already in the shape a database round trip produces, so in-memory and
	// database sessions hold equal values.
	if diff := cmp.Diff(dbRoundTrip(t, rec), rec); diff != "" {
		t.Errorf("stored record differs from its database round trip (-db +stored):\n%s", diff)
	}
	for _, key := range []string{"version", "seq", "previousMarkerId", "eventIds", "scope", "startTimestamp",
		"endTimestamp", "compactedContent", "ledger", "firstEventId", "lastEventId", "eventCount",
		"keepInvocations", "trigger", "summarizer"} {
		if _, ok := rec[key]; !ok {
			t.Errorf("record has no key %q: %v", key, rec)
		}
	}
	b, _ := json.Marshal(rec)
	shapes := map[string]any{
		"map":             rec,
		"database map":    dbRoundTrip(t, rec),
		"json string":     string(b),
		"json bytes":      b,
		"json.RawMessage": json.RawMessage(b),
	}
	for name, raw := range shapes {
		t.Run(name, func(t *testing.T) {
			got, err := ReadMarker(&Event{ID: "m3", Metadata: map[string]any{MetadataKey: raw}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, withRecords); diff != "" {
				t.Errorf("ReadMarker (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadMarkerNoRecord(t *testing.T) {
	for name, e := range map[string]*Event{
		"nil event":   nil,
		"no metadata": {ID: "e1"},
		"other keys":  {ID: "e1", Metadata: map[string]any{"x": 1}},
		"nil record":  {ID: "e1", Metadata: map[string]any{MetadataKey: nil}},
	} {
		m, err := ReadMarker(e)
		if m != nil || err != nil {
			t.Errorf("%s: ReadMarker = %v, %v; want nil, nil", name, m, err)
		}
	}
}

func TestReadMarkerInvalid(t *testing.T) {
	valid := func(edit func(r map[string]any)) map[string]any {
		md, err := fullMarker().Metadata()
		if err != nil {
			t.Fatal(err)
		}
		r := md[MetadataKey].(map[string]any)
		edit(r)
		return r
	}
	text := func(s string) map[string]any {
		return map[string]any{"role": "user", "parts": []any{map[string]any{"text": s}}}
	}
	cases := []struct {
		name   string
		record any
		reason string
	}{
		{"int", 42, "unsupported record type int"},
		{"marker pointer", fullMarker(), "unsupported record type *compaction.Marker"},
		{"slice", []any{1, 2}, "unsupported record type []interface {}"},
		{"not json", "{not json", "record does not decode"},
		{"json of the wrong shape", `{"eventIds": 3}`, "record does not decode"},
		{"NaN in a map", valid(func(r map[string]any) { r["startTimestamp"] = math.NaN() }), "cannot encode record"},
		{"channel in a map", valid(func(r map[string]any) { r["x"] = make(chan int) }), "cannot encode record"},
		{"no start", valid(func(r map[string]any) { delete(r, "startTimestamp") }), "missing or non-positive timestamp"},
		{"no end", valid(func(r map[string]any) { delete(r, "endTimestamp") }), "missing or non-positive timestamp"},
		{"no event count", valid(func(r map[string]any) { delete(r, "eventCount") }), "empty range"},
		{"zero start", valid(func(r map[string]any) { r["startTimestamp"] = 0.0 }), "missing or non-positive timestamp"},
		{"negative end", valid(func(r map[string]any) { r["endTimestamp"] = -5.0 }), "missing or non-positive timestamp"},
		{"huge end", valid(func(r map[string]any) { r["endTimestamp"] = 1e308 }), "timestamp out of range"},
		{"huge start before a normal end", valid(func(r map[string]any) { r["startTimestamp"] = 1e300 }), "timestamp out of range"},
		{"inverted", valid(func(r map[string]any) { r["startTimestamp"], r["endTimestamp"] = 20.0, 10.0 }), "inverted range"},
		{"zero count", valid(func(r map[string]any) { r["eventCount"] = 0.0 }), "empty range"},
		{"no content", valid(func(r map[string]any) { delete(r, "compactedContent") }), "compactedContent has no text"},
		{"blank text", valid(func(r map[string]any) { r["compactedContent"] = text(" \n\t") }), "compactedContent has no text"},
		{"thought only", valid(func(r map[string]any) {
			r["compactedContent"] = map[string]any{"parts": []any{map[string]any{"text": "hmm", "thought": true}}}
		}), "compactedContent has no text"},
		{"null parts only", valid(func(r map[string]any) { r["compactedContent"] = map[string]any{"parts": []any{nil}} }), "compactedContent has no text"},
		{"negative version", valid(func(r map[string]any) { r["version"] = -1.0 }), "unsupported version -1"},
		{"no version (adkctx's first records)", valid(func(r map[string]any) { delete(r, "version") }), "unsupported version 0"},
		{"version 1", valid(func(r map[string]any) { r["version"] = 1.0 }), "unsupported version 1"},
		{"a later version", valid(func(r map[string]any) { r["version"] = 3.0 }), "unsupported version 3"},
		{"covering its own event", valid(func(r map[string]any) { r["eventIds"] = []any{"e7", "bad1"} }), "names its own event"},
		{"rolling up its own event", valid(func(r map[string]any) { r["previousMarkerId"] = "bad1" }), "names its own event"},
		{"negative raw count", valid(func(r map[string]any) { r["rawCount"] = -1.0 }), "negative count"},
		{"v2 seq 0", valid(func(r map[string]any) { delete(r, "seq") }), "seq must be ≥ 1"},
		{"v2 no event ids", valid(func(r map[string]any) { delete(r, "eventIds"); delete(r, "excerptedEventIds") }), "no eventIds and no excerptedEventIds"},
		{"v2 masks only", valid(func(r map[string]any) { delete(r, "eventIds") }), ""},
		{"v2 masks only without an excerpt size", valid(func(r map[string]any) { delete(r, "eventIds"); delete(r, "excerptBytes") }), "no eventIds and no excerptedEventIds"},
		{"v2 first marker masks only", valid(func(r map[string]any) {
			delete(r, "eventIds")
			r["seq"], r["eventCount"] = 1.0, 0.0
			delete(r, "previousMarkerId")
			delete(r, "compactedContent")
		}), ""},
		{"v2 a summary of nothing", valid(func(r map[string]any) {
			delete(r, "eventIds")
			r["eventCount"] = 0.0
		}), "a summary of nothing"},
		{"v2 seq 2 without previous", valid(func(r map[string]any) { delete(r, "previousMarkerId") }), "seq > 1 without previousMarkerId"},
		{"v2 count below ids", valid(func(r map[string]any) { r["eventCount"] = 2.0 }), "eventCount below the number of eventIds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ReadMarker(&Event{ID: "bad1", Metadata: map[string]any{MetadataKey: tc.record}})
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("ReadMarker: %v, want a valid marker", err)
				}
				return
			}
			var ime *InvalidMarkerError
			if !errors.As(err, &ime) {
				t.Fatalf("ReadMarker = %v, %v; want an *InvalidMarkerError", m, err)
			}
			if m != nil {
				t.Errorf("ReadMarker returned a marker with its error: %+v", m)
			}
			if !strings.Contains(ime.Reason, tc.reason) || ime.EventID != "bad1" {
				t.Errorf("error = %+v, want reason containing %q for event bad1", ime, tc.reason)
			}
			if !strings.Contains(err.Error(), "event bad1") {
				t.Errorf("Error() = %q, want it to name the event", err.Error())
			}
		})
	}
}

// The reason of an invalid record never quotes the record's content (it is logged).
func TestInvalidMarkerErrorHasNoContent(t *testing.T) {
	secret := "the user's password is hunter2"
	records := []any{
		secret,
		map[string]any{"compactedContent": map[string]any{"parts": []any{map[string]any{"text": secret}}}},
		map[string]any{"startTimestamp": 1.0, "endTimestamp": 2.0, "eventCount": 1.0, "summarizer": secret},
	}
	for _, r := range records {
		_, err := ReadMarker(&Event{Metadata: map[string]any{MetadataKey: r}})
		if err == nil {
			t.Fatalf("ReadMarker(%v) = nil error", r)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %q quotes the record", err)
		}
		if (&InvalidMarkerError{Reason: "x"}).Error() != "compaction: invalid marker: x" {
			t.Errorf("Error() without an event id = %q", (&InvalidMarkerError{Reason: "x"}).Error())
		}
	}
}

func TestMarkerMetadataValidates(t *testing.T) {
	m := fullMarker()
	m.EventIDs, m.ExcerptedEventIDs = nil, nil
	if _, err := m.Metadata(); err == nil {
		t.Error("markerMetadata accepted a version 2 marker without eventIds or excerptedEventIds")
	}
	if _, err := (*Marker)(nil).Metadata(); err == nil {
		t.Error("markerMetadata accepted a nil marker")
	}
	// A non-finite ratio cannot be stored in JSON: it is written as 0, the marker still stored.
	m = fullMarker()
	m.CompressionRatio = math.Inf(1)
	md, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if got := md[MetadataKey].(map[string]any)["compressionRatio"]; got != 0.0 {
		t.Errorf("compressionRatio = %v, want 0", got)
	}
}

// A record with an excerpt size Config would refuse is still read (the view shows its results
// whole or raises the size): the summary is never lost over it.
func TestMarkerOddExcerptSizeIsRead(t *testing.T) {
	for _, n := range []float64{-1, 0, 100} {
		md, err := fullMarker().Metadata()
		if err != nil {
			t.Fatal(err)
		}
		rec := md[MetadataKey].(map[string]any)
		rec["excerptBytes"] = n
		m, err := ReadMarker(&Event{ID: "m3", Metadata: map[string]any{MetadataKey: rec}})
		if err != nil || m == nil || m.ExcerptBytes != int(n) {
			t.Errorf("excerptBytes %v: ReadMarker = %+v, %v", n, m, err)
		}
	}
}

// The key users read in the documentation is the one every reader of records looks for.
func TestMetadataKeyIsTheRecordsKey(t *testing.T) {
	if MetadataKey != record.MetadataKey {
		t.Errorf("compaction.MetadataKey %q, internal/record's %q", MetadataKey, record.MetadataKey)
	}
}
