package readback

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const logName = OutputPrefix + "run_tests-call1.txt"

func saveLog(t testing.TB, st *memStore, name, data string) {
	t.Helper()
	if _, err := st.Save(context.Background(), name, []byte(data), "text/plain; charset=utf-8"); err != nil {
		t.Fatal(err)
	}
}

// shownLines returns the numbered lines of a lines-mode page, as "N\ttext".
func shownLines(page string) []string {
	var out []string
	for _, l := range strings.Split(page, "\n")[1:] {
		if l != "" && l[0] >= '0' && l[0] <= '9' && strings.Contains(l, "\t") {
			out = append(out, l)
		}
	}
	return out
}

func numbered(lines []string, from int) []string {
	var out []string
	for i, l := range lines {
		out = append(out, fmt.Sprintf("%d\t%s", from+i, l))
	}
	return out
}

func TestReadOutputLines(t *testing.T) {
	data := testLog(5000)
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	st := newMemStore(4096)
	saveLog(t, st, logName, data)
	for _, tc := range []struct {
		rng            string
		first, last    int // the lines the page must show, from 1
		footerContains string
	}{
		{"120-180", 120, 180, `more: range="181-"`},
		{"1-3", 1, 3, `range="4-"`},
		{"-5", 4996, 5000, "[end of output]"},
		{"4999", 4999, 5000, "[end of output]"},
		{"4990+3", 4990, 4992, `range="4993-"`},
	} {
		t.Run(tc.rng, func(t *testing.T) {
			before := st.reads()
			res, err := ReadOutput(context.Background(), st, logName, tc.rng, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			// A page costs the chunks that hold it: at most a page and a chunk on either side.
			if got := st.reads() - before; got != res.BytesRead || got > DefaultMaxResultBytes+2*4096 {
				t.Errorf("read %d bytes from the store (reported %d) for one page of a %d-byte output", got, res.BytesRead, len(data))
			}
			if diff := cmp.Diff(numbered(lines[tc.first-1:tc.last], tc.first), shownLines(res.Text)); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if !strings.Contains(res.Text, tc.footerContains) {
				t.Errorf("footer does not say %q:\n%s", tc.footerContains, res.Text[max(0, len(res.Text)-200):])
			}
			if len(res.Text) > DefaultMaxResultBytes {
				t.Errorf("result is %d bytes, over %d", len(res.Text), DefaultMaxResultBytes)
			}
		})
	}
}

// A page never exceeds the bound: a huge range is shown from its start, with the range that
// continues it, and paging through it that way yields every line exactly once.
func TestReadOutputPagesThroughAll(t *testing.T) {
	data := testLog(3000)
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	st := newMemStore(1000)
	saveLog(t, st, logName, data)
	var got []string
	rng := "1-999999999"
	for page := 0; page < 1000; page++ {
		res, err := ReadOutput(context.Background(), st, logName, rng, Limits{MaxResultBytes: 2048})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Text) > 2048 {
			t.Fatalf("page %d is %d bytes", page, len(res.Text))
		}
		got = append(got, shownLines(res.Text)...)
		i := strings.Index(res.Text, `range="`)
		if i < 0 {
			break
		}
		rng = res.Text[i+len(`range="`):]
		rng = rng[:strings.IndexByte(rng, '"')]
	}
	if diff := cmp.Diff(numbered(lines, 1), got); diff != "" {
		t.Errorf("paged lines (-want +got):\n%s", diff)
	}
}

func TestReadOutputLongLineAndBytes(t *testing.T) {
	line := strings.Repeat("é{\"id\":12345}", 4000) // one 56 KB line of JSON, 2-byte runes
	st := newMemStore(4096)
	saveLog(t, st, logName, line)
	res, err := ReadOutput(context.Background(), st, logName, "1", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "too long for one page") || !strings.Contains(res.Text, `range="bytes=`) {
		t.Errorf("a long line does not point at byte ranges:\n%.300s", res.Text)
	}
	// Pages of bytes put back together are the output, whatever the page size.
	var got strings.Builder
	rng := "bytes=3-"
	got.WriteString(line[:3])
	for i := 0; i < 400; i++ {
		res, err := ReadOutput(context.Background(), st, logName, rng, Limits{MaxResultBytes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		body := res.Text[strings.IndexByte(res.Text, '\n')+1 : strings.LastIndexByte(res.Text, '\n')]
		if !utf8.ValidString(body) {
			t.Fatalf("page splits a rune: %q", body[:20])
		}
		got.WriteString(body)
		j := strings.Index(res.Text, `range="`)
		if j < 0 {
			break
		}
		rng = res.Text[j+len(`range="`):]
		rng = rng[:strings.IndexByte(rng, '"')]
	}
	if got.String() != line {
		t.Errorf("byte pages do not rebuild the output: %d bytes, want %d", got.Len(), len(line))
	}
}

func TestReadOutputErrors(t *testing.T) {
	st := newMemStore(4096)
	saveLog(t, st, logName, testLog(10))
	bin := OutputPrefix + "dump-c1.bin"
	if _, err := st.Save(context.Background(), bin, []byte{0xff, 0xfe, 0, 1, 2, 'a', 'b'}, "application/octet-stream"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, rng, want string }{
		{"", "", "name is empty"},
		{"../" + logName, "", "not a saved tool output"},
		{"/etc/passwd", "", "not a saved tool output"},
		{"user:" + logName, "", "not a saved tool output"},
		{OutputPrefix + "x/../y", "", "not allowed"},
		{OutputPrefix + strings.Repeat("a", 300), "", "at most 255"},
		{OutputPrefix + "other-session.txt", "", "no saved output named"},
		{logName, "11", "has 10 lines"},
		{logName, "bytes=100000-", "has"},
		{logName, "x", "not valid"},
		{bin, "1-10", "binary"},
	} {
		_, err := ReadOutput(context.Background(), st, tc.name, tc.rng, Limits{})
		if !IsInputError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadOutput(%.40q, %q) = %v; want an *inputError saying %q", tc.name, tc.rng, err, tc.want)
		}
	}
	res, err := ReadOutput(context.Background(), st, bin, "bytes=0-", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "00000000  ff fe 00 01 02 61 62") || !utf8.ValidString(res.Text) {
		t.Errorf("binary output is not shown as a hex dump:\n%s", res.Text)
	}
}

// FuzzReadOutput: any output and any range give a bounded, valid-UTF-8 page or an *inputError;
// lines shown are the output's lines.
func FuzzReadOutput(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), "2-3", 64)
	f.Add([]byte("no newline at all"), "bytes=3-5", 70)
	f.Add([]byte("\xff\xfe binary"), "bytes=-4", 100)
	f.Add([]byte("é\nü\n\n\nend"), "-2", 65)
	f.Fuzz(func(t *testing.T, data []byte, rng string, chunk int) {
		if chunk < 0 {
			chunk = -chunk
		}
		st := newMemStore(64 + chunk%512)
		if _, err := st.Save(context.Background(), logName, data, "text/plain"); err != nil {
			t.Fatal(err)
		}
		res, err := ReadOutput(context.Background(), st, logName, rng, Limits{MaxResultBytes: 1100})
		if err != nil {
			if !IsInputError(err) {
				t.Fatalf("ReadOutput(%q): %v is not an *inputError", rng, err)
			}
			return
		}
		if len(res.Text) > 1100 {
			t.Fatalf("result %d bytes over the bound", len(res.Text))
		}
		if !utf8.Valid(data) {
			return
		}
		lines := bytes.Split(data, []byte("\n"))
		for _, l := range shownLines(res.Text) {
			var n int
			var text string
			if _, err := fmt.Sscanf(l, "%d\t", &n); err != nil {
				continue
			}
			text = l[strings.IndexByte(l, '\t')+1:]
			if n < 1 || n > len(lines) || string(lines[n-1]) != text {
				if r, _ := ParseRange(rng); r.Unit == Lines {
					t.Fatalf("line %d shown as %q, is %q", n, text, lines[min(max(n-1, 0), len(lines)-1)])
				}
			}
		}
	})
}

// Every result fits the bound, even with the longest name and the smallest bound.
func TestResultsFitTheBound(t *testing.T) {
	name := OutputPrefix + strings.Repeat("n", maxNameBytes-len(OutputPrefix))
	st := newMemStore(512)
	saveLog(t, st, name, testLog(400)+strings.Repeat("long line ", 300)+"\n")
	writeSegments(t, st, 2, 1, map[int]string{1: "needle " + strings.Repeat("x", 3000)})
	lim := Limits{MaxResultBytes: 1}
	want := minResultBytes
	for _, call := range []func() (*Result, error){
		func() (*Result, error) { return ReadOutput(context.Background(), st, name, "1-400", lim) },
		func() (*Result, error) { return ReadOutput(context.Background(), st, name, "401", lim) },
		func() (*Result, error) { return ReadOutput(context.Background(), st, name, "bytes=5-", lim) },
		func() (*Result, error) {
			return SearchOutputs(context.Background(), st, SearchRequest{Query: strings.Repeat("line", 20), Name: name}, lim)
		},
		func() (*Result, error) {
			return SearchOutputs(context.Background(), st, SearchRequest{Query: "TestThing"}, lim)
		},
		func() (*Result, error) {
			return SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: "needle handler1_2"}, lim)
		},
		func() (*Result, error) {
			return ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 2"}, lim)
		},
		func() (*Result, error) {
			return ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 2", Whole: true, From: 3}, lim)
		},
	} {
		res, err := call()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Text) > want {
			t.Errorf("%d bytes, over %d:\n%s", len(res.Text), want, res.Text)
		}
	}
}

// bodyLine matches a line of TestResultsFitTheLineBound's output ("x" and a digit).
var bodyLine = regexp.MustCompile(`(?m)x\d$`)

// Every result fits the line bound too (adkctx's truncation counts lines as well as bytes), on
// an output of short lines, with the default and a small bound.
func TestResultsFitTheLineBound(t *testing.T) {
	var short strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&short, "x%d\n", i%10)
	}
	st := newMemStore(4096)
	saveLog(t, st, logName, short.String())
	events := turnEvents(0, "", "step 0: print the short lines", short.String()[:30000])
	if _, err := WriteHistory(context.Background(), st, events, 1); err != nil {
		t.Fatal(err)
	}
	for _, maxLines := range []int{0, 30} {
		lim := Limits{MaxResultLines: maxLines}
		want := DefaultMaxResultLines
		if maxLines > 0 {
			want = maxLines
		}
		calls := map[string]func() (*Result, error){
			"lines": func() (*Result, error) { return ReadOutput(context.Background(), st, logName, "1-20000", lim) },
			"bytes": func() (*Result, error) { return ReadOutput(context.Background(), st, logName, "bytes=0-", lim) },
			"search": func() (*Result, error) {
				return SearchOutputs(context.Background(), st, SearchRequest{Query: "x1", Name: logName, Context: maxContextLines}, lim)
			},
			"search-all": func() (*Result, error) {
				return SearchOutputs(context.Background(), st, SearchRequest{Query: "x", Context: 1}, lim)
			},
			"turn-whole": func() (*Result, error) {
				return ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 1", Whole: true, From: 3}, lim)
			},
			"turn": func() (*Result, error) {
				return ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 1"}, lim)
			},
			"entry": func() (*Result, error) {
				return ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 1", Entry: 3}, lim)
			},
			"entry-bytes": func() (*Result, error) {
				return ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 1", Entry: 3, Range: "bytes=0-"}, lim)
			},
		}
		for name, call := range calls {
			t.Run(fmt.Sprintf("%s/%d", name, maxLines), func(t *testing.T) {
				res, err := call()
				if err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(strings.TrimSuffix(res.Text, "\n"), "\n") + 1; n > want {
					t.Errorf("%d lines, over %d:\n%s", n, want, res.Text[:min(len(res.Text), 300)])
				}
				if !bodyLine.MatchString(res.Text) { // a line of the output, not the name or the query
					t.Errorf("shows no line of the output:\n%s", res.Text)
				}
			})
		}
	}
}
