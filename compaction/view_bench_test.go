package compaction

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// benchStream builds n raw events with markers appended every n/markers
// events. rollup: each marker covers everything from the first event
// (rolled-up summaries); otherwise each covers the events since the previous
// marker plus an overlap of 2 earlier events (sliding window). Timestamps
// advance by 1 ms, with pairs sharing a timestamp (ties).
func benchStream(tb testing.TB, n, markers int, rollup bool) []*session.Event {
	tb.Helper()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	every := n / markers
	stream := make([]*session.Event, 0, n+markers)
	prevEnd := 0
	for i := range n {
		stream = append(stream, &session.Event{
			ID:           fmt.Sprintf("e%d", i),
			InvocationID: fmt.Sprintf("inv%d", i/4),
			Timestamp:    base.Add(time.Duration(i/2) * time.Millisecond),
			Author:       "agent",
			LLMResponse:  model.LLMResponse{Content: genai.NewContentFromText("event text", genai.RoleModel)},
		})
		if (i+1)%every != 0 {
			continue
		}
		from := 0
		if !rollup {
			from = max(prevEnd-2, 0)
		}
		// Keep the 3 newest events raw.
		to := len(stream) - 4
		m := &Marker{CompactedContent: genai.NewContentFromText("summary", genai.RoleUser)}
		if m.SetRange(stream, from, to, nil) == 0 {
			tb.Fatal("empty bench marker")
		}
		prevEnd = to
		stream = append(stream, NewMarkerEvent(m, "inv", stream[len(stream)-1].Timestamp))
	}
	return stream
}

// BenchmarkView measures the history view; the figure is
// sliding/events=10000/markers=100 (ns/event).
func BenchmarkView(b *testing.B) {
	for _, mode := range []struct {
		name   string
		rollup bool
	}{{"sliding", false}, {"rollup", true}} {
		for _, size := range []struct{ events, markers int }{{1000, 10}, {10000, 100}, {100000, 1000}} {
			b.Run(fmt.Sprintf("%s/events=%d/markers=%d", mode.name, size.events, size.markers), func(b *testing.B) {
				stream := benchStream(b, size.events, size.markers, mode.rollup)
				if got := len(View(stream, nil)); got == 0 || got > size.events {
					b.Fatalf("view has %d events", got)
				}
				b.ReportAllocs()
				iters := 0
				for b.Loop() {
					View(stream, nil)
					iters++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(iters)/float64(len(stream)), "ns/event")
			})
		}
	}
}

// BenchmarkReadMarker measures parsing one stored (map) record.
func BenchmarkReadMarker(b *testing.B) {
	e := NewMarkerEvent(sampleMarker(), "inv", time.Now())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadMarker(e); err != nil {
			b.Fatal(err)
		}
	}
}
