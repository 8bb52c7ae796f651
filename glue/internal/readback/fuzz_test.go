package readback

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/adkctx/adkctx/compaction"
)

// FuzzHistorySegment: whatever bytes a store returns as a history segment (a damaged or forged
// one), searching and reading turns give a result within bounds, an *inputError or a
// *corruptError — never a panic, never an offset outside the segment.
func FuzzHistorySegment(f *testing.F) {
	st := newMemStore(256)
	var events []compaction.Event
	events = append(events, turnEvents(1, "", "remember PELICAN", "timeout_ms=7125\nline two")...)
	events = append(events, turnEvents(2, "root.a", "second", strings.Repeat("data ", 100))...)
	if _, err := WriteHistory(context.Background(), st, events, 2); err != nil {
		f.Fatal(err)
	}
	valid := st.outputs[HistoryName(1)][0]
	var whole []byte
	for _, c := range valid.chunks {
		whole = append(whole, c...)
	}
	f.Add(whole, "pelican", "turn 1", 64)
	f.Add(whole[:len(whole)/2], "7125", "turn 2, entry 3", 300)
	f.Add([]byte(historyMagic+" seq=1 header=2\n{}\n"), "x", "1.1", 100)
	f.Fuzz(func(t *testing.T, data []byte, query, turn string, chunk int) {
		st := newMemStore(64 + max(chunk, -chunk)%1024)
		if _, err := st.Save(context.Background(), HistoryName(1), data, historyMIME); err != nil {
			t.Fatal(err)
		}
		lim := Limits{MaxResultBytes: 1024}
		check := func(what string, res *Result, err error) {
			var ce *corruptError
			switch {
			case err == nil:
				if len(res.Text) > 1024 {
					t.Fatalf("%s: %d bytes over the bound", what, len(res.Text))
				}
			case IsInputError(err), errors.As(err, &ce):
			default:
				t.Fatalf("%s: unexpected error %v", what, err)
			}
		}
		res, err := SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: query}, lim)
		check("search", res, err)
		res, err = ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: turn}, lim)
		check("read_turn", res, err)
		res, err = ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: turn, Whole: true, Entry: 1, Range: "bytes=3-"}, lim)
		check("read_turn entry", res, err)
	})
}

// FuzzSearchOutputs: any output, query and context give a bounded result or an *inputError.
func FuzzSearchOutputs(f *testing.F) {
	f.Add([]byte("a\nneedle\nb\n"), "needle", false, 1, 64)
	f.Add([]byte("x\xffneedle\r\n"), "ne+d", true, 0, 70)
	f.Add([]byte(strings.Repeat("long line ", 500)), "line", false, 3, 100)
	f.Fuzz(func(t *testing.T, data []byte, query string, isRegexp bool, context_, chunk int) {
		st := newMemStore(64 + max(chunk, -chunk)%512)
		if _, err := st.Save(context.Background(), logName, data, "text/plain"); err != nil {
			t.Fatal(err)
		}
		res, err := SearchOutputs(context.Background(), st, SearchRequest{Query: query, Regexp: isRegexp, Context: context_}, Limits{MaxResultBytes: 1100, MaxScanBytes: 2000, MaxMatches: 5})
		if err != nil {
			if !IsInputError(err) {
				t.Fatalf("%v is not an *inputError", err)
			}
			return
		}
		if len(res.Text) > 1100 {
			t.Fatalf("%d bytes over the bound", len(res.Text))
		}
	})
}
