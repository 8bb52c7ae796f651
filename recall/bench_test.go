package recall

import (
	"context"
	"fmt"
	"testing"

	"github.com/adkctx/adkctx/compaction"
)

// BenchmarkSearchHistory reports the bytes one history search and one read_turn read from a
// 200-turn history in 20 segments (each turn holds a 15 KB file read), against the history's
// size: the index buckets and headers, not the transcripts.
func BenchmarkSearchHistory(b *testing.B) {
	st := newMemStore(DefaultChunkBytes)
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
		seg, err := WriteHistory(context.Background(), st, events)
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
		res, err = ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "4.8"}, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		turn = res.BytesRead
	}
	b.ReportMetric(float64(search), "search_bytes_read/op")
	b.ReportMetric(float64(turn), "read_turn_bytes_read/op")
	b.ReportMetric(float64(total), "history_bytes")
}
