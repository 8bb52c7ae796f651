package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/adkctx/adkctx/compaction"
)

// benchSession returns n events with markers in one chain, each marker covering the events
// stored since the previous one except the last 20 (a raw tail), with a summary of about 2 KB
// and a ledger, as a long session holds them (markers included in n).
func benchSession(tb testing.TB, n, markers int) []Event {
	tb.Helper()
	per := n / markers
	events := make([]Event, 0, n)
	prev, uncovered, seq := "", []string(nil), 0
	summary := strings.Repeat("Goal: keep the build green; files read: src/a.go, src/b.go. ", 34)
	for k := 0; len(events) < n; k++ {
		inv := fmt.Sprintf("i%d", k/4)
		var e Event
		switch k % 4 {
		case 0:
			e = userEv(fmt.Sprintf("e%d", k), inv, "Please read the next file and fix what is broken there.")
		case 1:
			e = callEv(fmt.Sprintf("e%d", k), inv, fmt.Sprintf("c%d", k), "read_file", map[string]any{"path": fmt.Sprintf("src/f%d.go", k%97)})
		case 2:
			e = respEv(fmt.Sprintf("e%d", k), inv, fmt.Sprintf("c%d", k-1), "read_file", map[string]any{"content": "package main"})
		default:
			e = modelEv(fmt.Sprintf("e%d", k), inv, "Fixed the file; the tests pass now.")
		}
		e.Timestamp = t0.Add(time.Duration(len(events)) * time.Second)
		events = append(events, e)
		uncovered = append(uncovered, e.ID)
		if len(events)%per == per-1 && len(uncovered) > 20 {
			seq++
			id := fmt.Sprintf("m%d", seq)
			m := v2(seq, prev, summary, uncovered[:len(uncovered)-20]...)
			m.EventCount = len(events)
			m.Ledger = &Ledger{Goal: "keep the build green", Tools: map[string]int{"read_file": len(events) / 4},
				Paths: map[string]map[string]int{"src/a.go": {"read_file": 3}, "src/b.go": {"read_file": 2}}}
			me := mustMarkerEvent(tb, id, m)
			me.Timestamp = t0.Add(time.Duration(len(events)) * time.Second)
			events = append(events, me)
			uncovered = append([]string(nil), uncovered[len(uncovered)-20:]...)
			prev = id
		}
	}
	return events
}

// BenchmarkView measures one view of a long session through a warm Viewer (the records parsed
// once, as a long-lived process sees them) and a cold one (every record parsed: a process that
// never saw the session). ns/event must stay flat from 1,000 to 100,000 events.
func BenchmarkView(b *testing.B) {
	for _, size := range []struct{ events, markers int }{{1_000, 10}, {10_000, 100}, {100_000, 1000}, {100_000, 100}} {
		events := benchSession(b, size.events, size.markers)
		for _, mode := range []string{"warm", "cold"} {
			b.Run(fmt.Sprintf("events=%d/markers=%d/%s", size.events, size.markers, mode), func(b *testing.B) {
				v := NewViewer(nil)
				v.View(events)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if mode == "cold" {
						v = NewViewer(nil)
					}
					if items := v.View(events); len(items) == 0 {
						b.Fatal("empty view")
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
			})
		}
	}
}

// BenchmarkViewScopes: 20,000 events in 500 isolation scopes, each with its marker (adk-go v2
// sub-agents): the view stays one pass over the events.
func BenchmarkViewScopes(b *testing.B) {
	var events []Event
	for k := 0; k < 20_000; k++ {
		e := userEv(fmt.Sprintf("e%d", k), fmt.Sprintf("i%d", k/4), "a message")
		e.Scope = fmt.Sprintf("s%d", k%500)
		events = append(events, e)
	}
	for s := 0; s < 500; s++ {
		m := v2(1, "", "summary", fmt.Sprintf("e%d", 19_500+s))
		m.Scope = fmt.Sprintf("s%d", s)
		events = append(events, mustMarkerEvent(b, fmt.Sprintf("m%d", s), m))
	}
	events = stamp(events...)
	v := NewViewer(nil)
	v.View(events)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v.View(events)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
}

// The benchmark's session is what it claims: one chain, the newest marker wins, a raw tail.
func TestBenchSessionShape(t *testing.T) {
	events := benchSession(t, 10_000, 100)
	items := NewViewer(nil).View(events)
	var summaries, raw int
	for _, it := range items {
		if it.Summary != nil {
			summaries++
		} else {
			raw++
		}
	}
	markers := 0
	for i := range events {
		if hasRecord(&events[i]) {
			markers++
		}
	}
	if summaries != 1 || raw < 20 || raw > 200 || markers < 90 {
		t.Errorf("view of the bench session: %d summaries, %d raw events, %d markers", summaries, raw, markers)
	}
}
