package readback

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/adkctx/adkctx/compaction"
)

// BenchmarkSearchHistory reports the bytes one history search and one read_turn read from a
// 200-turn history in 20 segments (each turn holds a 15 KB file read), against the history's
// size: the index buckets and headers, not the transcripts.
func BenchmarkSearchHistory(b *testing.B) {
	st := newMemStore(defaultChunkBytes)
	var total int64
	for s := 0; s < 20; s++ {
		var events []compaction.Event
		for k := 0; k < 10; k++ {
			inv := s*10 + k
			fact := ""
			if inv == 37 {
				fact = "const retryBudget = 17 // agreed with the payments team"
			}
			events = append(events, turnEvents(inv, "", fmt.Sprintf("step %d", inv), fileBody(inv, fact))...)
		}
		seg, err := WriteHistory(context.Background(), st, events, (s+1)*10)
		if err != nil {
			b.Fatal(err)
		}
		total += int64(seg.Bytes)
	}
	var search, turn int64
	for b.Loop() {
		res, err := SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: "retryBudget payments"}, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		search = res.BytesRead
		res, err = ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 38"}, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		turn = res.BytesRead
	}
	b.ReportMetric(float64(search), "search_bytes_read/op")
	b.ReportMetric(float64(turn), "read_turn_bytes_read/op")
	b.ReportMetric(float64(total), "history_bytes")
}

// BenchmarkSearchWorstCase runs every pattern of the hostile class (huge repetitions, nested
// repetition, many alternatives, unbounded matches) over the outputs with huge lines, each
// search bounded at 500 ms, and reports the slowest call and by how much it passed its bound
// (the time bound is a bound: the figure is a few tens of ms, one piece of matching, not the
// 25–37 s the report measured). Patterns refused as too costly count as refused.
func BenchmarkSearchWorstCase(b *testing.B) {
	const bound = 500 * time.Millisecond
	st := newMemStore(defaultChunkBytes)
	outputs := hostileOutputs()
	var names []string
	for i, what := range []string{"ci log with a 400 KB base64 line", "a 1.1 MB line", "a 300 KB run of one byte"} {
		name := fmt.Sprintf("%shostile-c%d.txt", OutputPrefix, i)
		saveLog(b, st, name, outputs[what])
		names = append(names, name)
	}
	var worst time.Duration
	refused := 0
	for b.Loop() {
		refused = 0
		for _, p := range hostilePatterns() {
			for _, name := range names {
				req := p
				req.Name = name
				start := time.Now()
				_, err := SearchOutputs(context.Background(), st, req, Limits{MaxScanTime: bound})
				worst = max(worst, time.Since(start))
				if err != nil {
					if !IsInputError(err) {
						b.Fatal(err)
					}
					refused++
				}
			}
		}
	}
	b.ReportMetric(float64(worst.Milliseconds()), "worst_ms")
	b.ReportMetric(float64((worst - bound).Milliseconds()), "past_bound_ms")
	b.ReportMetric(float64(refused), "refused")
}
