// Package readback is the work behind the recall tools: pages and searches of saved
// outputs, the history segments a compaction writes and their search, the notes that name the
// tools, the saved outputs' names. The glue reaches it through package glue (Engine.Recall); the
// storage it reads and writes is package recall's Store.
//
// # Bounds
//
// Every call is bounded whatever the session's size: a page read costs the chunks that hold the
// page (recall.Layout); a search reads at most [Limits.MaxScanBytes] and returns at most
// [Limits.MaxMatches] matches, within [Limits.MaxScanTime] for any pattern (regular expressions
// are measured first, see [PatternError]); every result fits in [Limits.MaxResultBytes]. When a
// bound stops a call short, its result says so and names the call that continues where it
// stopped. Stores that do not keep outputs in chunks (adk-go's in-memory and GCS artifact
// services) are read whole on each call: the bounds on results hold, the bound on bytes read
// does not.
//
// # Ranges
//
// [ParseRange] reads the range a caller asks for, in lines (the default, 1-based) or in bytes
// (prefix "bytes=", 0-based as in HTTP):
//
//	""            the first page
//	"120-180"     lines 120 to 180 (also "120:180", "120..180", "120–180")
//	"3000"        from line 3000, one page (also "3000-")
//	"-50"         the last 50 lines
//	"120+40"      40 lines from line 120
//	"bytes=0-999" bytes 0 to 999; "bytes=5000-" from byte 5000; "bytes=-500" the last 500 bytes
//
// A page never holds more than [Limits.MaxResultBytes]; a range larger than that is shown from
// its start, with the range that continues it.
//
// # History
//
// [WriteHistory] is called when a compaction marker is stored, with the events the marker newly
// covers. It saves one history segment (a saved output named "adkctx-history-NNNNNN.txt") holding
// a transcript of those turns and an inverted index over it, so that [SearchHistory] reads a few
// index buckets per segment and [ReadTurn] reads one turn, never the whole session. Turns are
// labelled as the user counts them: "turn 7" is the seventh turn (one per invocation, each begun
// by a user message) of the reader's isolation scope, "turn 7, entry 3" its third message, call
// or result; segments the previous release wrote keep their labels ("turn 2.4": the fourth turn
// of segment 2). A search ranks first the entries that hold the whole query, BM25 the rest.
//
// # Privacy
//
// Nothing in this package logs; the tools built on it must not log queries or results.
package readback
