package readback

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testPieceWork is the work of one match call in tests: under -race, regexp runs about sixty
// times slower, and the bounds hold for any budget.
const testPieceWork = 1 << 16

// frozenClock never moves: no search it times is stopped by the time bound.
func frozenClock() time.Time { return t0 }

// lateClock is always an hour past the last reading: every check finds the deadline passed.
type lateClock struct{ t time.Time }

func (c *lateClock) now() time.Time {
	c.t = c.t.Add(time.Hour)
	return c.t
}

// tickClock moves by step at each reading.
type tickClock struct {
	t    time.Time
	step time.Duration
}

func (c *tickClock) now() time.Time {
	c.t = c.t.Add(c.step)
	return c.t
}

// base64Line is n bytes of base64 without a newline.
func base64Line(rng *rand.Rand, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.Intn(len(alphabet))]
	}
	return string(b)
}

// hostileOutputs are the outputs of the class the time bound failed on: a CI log with one huge
// base64 line, a line longer than the scanner holds, a long line of one repeated byte, many
// short lines.
func hostileOutputs() map[string]string {
	rng := rand.New(rand.NewSource(26))
	ci := testLog(200) + "artifact: " + base64Line(rng, 400<<10) + "\n" + testLog(200)
	return map[string]string{
		"ci log with a 400 KB base64 line": ci,
		"a 1.1 MB line":                    base64Line(rng, maxLineBytes+100<<10) + "\n",
		"a 300 KB run of one byte":         strings.Repeat("a", 300<<10),
		"60,000 short lines":               testLog(60000),
	}
}

// hostilePatterns are queries of the class: huge repetition counts, nested repetition, many
// alternatives, unbounded matches, anchors, a query at the size limit.
func hostilePatterns() []SearchRequest {
	var alts []string
	for i := range 90 {
		alts = append(alts, fmt.Sprintf("w%02dx", i))
	}
	return []SearchRequest{
		{Query: `[A-Za-z0-9+/]{1000}[A-Za-z0-9+/]{1000}#`, Regexp: true}, // the report's
		{Query: `[A-Za-z0-9+/]{1000}#`, Regexp: true},
		{Query: `[A-Za-z0-9+/]{200}#`, Regexp: true},
		{Query: `[A-Za-z0-9+/]{100}`, Regexp: true},
		{Query: strings.Repeat(`a{1000}`, 73), Regexp: true},
		{Query: `\pL{1000}`, Regexp: true},
		{Query: `(?i)k{500}`, Regexp: true},
		{Query: `(?:(?:[a-z]{0,30}){0,30})#`, Regexp: true},
		{Query: `(?:(?:a|aa){0,20}){0,40}b`, Regexp: true},
		{Query: `((a+)+)+$`, Regexp: true},
		{Query: `(\w+\s*)+#`, Regexp: true},
		{Query: `.*.*.*.*#`, Regexp: true},
		{Query: `(?:` + strings.Join(alts, "|") + `)`, Regexp: true},
		{Query: `(?:` + strings.Join(alts[:40], "|") + `){1,10}z`, Regexp: true},
		{Query: `^artifact: [A-Za-z0-9+/]{50}`, Regexp: true},
		{Query: `[+/]{3}$`, Regexp: true},
		{Query: strings.Repeat("ab", maxQueryBytes/2)},
		{Query: "TestThing42"},
	}
}

// Every match call of every search of the class does at most one piece's work, and once the time
// bound has passed a search does at most one more piece (its first piece is always done, so its
// cursor moves on): the work a search does past its deadline is bounded whatever the pattern and
// the output. Patterns whose matching cannot be bounded are refused with a *PatternError, by the
// measure of their compiled program, not by running them.
func TestSearchWorkBound(t *testing.T) {
	outputs := hostileOutputs()
	st := newMemStore(defaultChunkBytes)
	names := map[string]string{}
	for i, what := range []string{"ci log with a 400 KB base64 line", "a 1.1 MB line", "a 300 KB run of one byte", "60,000 short lines"} {
		names[what] = fmt.Sprintf("%shostile-c%d.txt", OutputPrefix, i)
		saveLog(t, st, names[what], outputs[what])
	}
	refused := 0
	for _, p := range hostilePatterns() {
		for what, name := range names {
			req := p
			req.Name = name
			clock := &lateClock{t: t0}
			res, s, err := searchOutputs(context.Background(), st, req, Limits{}, searchEnv{now: clock.now, pieceWork: testPieceWork})
			var pe *PatternError
			if errors.As(err, &pe) {
				refused++
				if !IsInputError(err) || (pe.Program <= maxProgram && 2*(pe.Span-1) <= testPieceWork/pe.Program) {
					t.Errorf("%.40q: refused without cause: %v", p.Query, err)
				}
				break // the same for every output
			}
			if err != nil {
				t.Fatalf("%.40q over %s: %v", p.Query, what, err)
			}
			if s.maxPiece > testPieceWork {
				t.Errorf("%.40q over %s: one match call did %d units of work, bound %d", p.Query, what, s.maxPiece, testPieceWork)
			}
			if s.work >= 2*testPieceWork {
				t.Errorf("%.40q over %s: %d units of work in %d calls past the deadline, bound %d", p.Query, what, s.work, s.pieces, 2*testPieceWork)
			}
			if s.pieces == 0 {
				t.Errorf("%.40q over %s: matched nothing: its cursor does not move on", p.Query, what)
			}
			if s.next != nil && !strings.Contains(res.Text, "time bound") && !strings.Contains(res.Text, "result is full") && !strings.Contains(res.Text, "matches (the per-call bound)") {
				t.Errorf("%.40q over %s: stopped without saying why:\n%.400s", p.Query, what, res.Text)
			}
		}
	}
	if refused == 0 {
		t.Error("no pattern of the class was refused")
	}
}

// The production budget refuses the report's pattern and accepts everyday ones, each with
// pieces that hold its longest match twice and cost at most pieceWork.
func TestPatternBudget(t *testing.T) {
	for _, tc := range []struct {
		query   string
		refused bool
	}{
		{`[A-Za-z0-9+/]{1000}[A-Za-z0-9+/]{1000}#`, true},
		{strings.Repeat(`a{1000}`, 5), true},
		{`\pL{1000}`, true},
		{`[A-Za-z0-9+/]{200}#`, false},
		{`id=REQ-[0-9a-f]{6}\b`, false},
		{`(?i)(error|fail(ed|ure)?):\s+\S+`, false},
		{`--- FAIL: Test\w+ \(\d+\.\d+s\)`, false},
		{`(a*)*(b+)+$`, false},
	} {
		m, err := regexpMatcher(tc.query, pieceWork)
		var pe *PatternError
		if got := errors.As(err, &pe); got != tc.refused {
			t.Errorf("%.40q: refused %v (%v), want %v", tc.query, got, err, tc.refused)
			continue
		}
		if tc.refused {
			if !strings.Contains(err.Error(), "repeat counts") {
				t.Errorf("%.40q: the refusal does not say what to change: %v", tc.query, err)
			}
			continue
		}
		if int64(m.piece)*m.perByte > pieceWork || m.overlap > m.piece/2 {
			t.Errorf("%.40q: piece %d bytes × %d, overlap %d", tc.query, m.piece, m.perByte, m.overlap)
		}
	}
}

func TestMaxSpan(t *testing.T) {
	for q, want := range map[string]int{
		"abc": 3, "(?i)k": 3, "(?i)s": 2, `[a-z]{3,5}`: 5, `\pL`: 4, `.`: 4, `a*`: -1, `a+b`: -1, `(?:)`: 0, `a|bcd`: 3,
		`^$`: 0, `x{0,30}`: 30, `(?:ab){2}c?`: 5, `(?:\b)*`: 0, `[é]`: 2, `a{2,}`: -1, `(a|b*)c`: -1, `\x{10FFFF}`: 4,
	} {
		re, err := syntax.Parse(q, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := maxSpan(re); got != want {
			t.Errorf("maxSpan(%q) = %d, want %d", q, got, want)
		}
	}
}

// A search stopped by its time bound, mid-line or between lines, continues from its cursor:
// following the cursors finds the lines one unbounded search finds, long lines and matches that
// straddle a piece's edge included.
func TestSearchTimeBoundCursor(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var b strings.Builder
	var want []int
	for i := 1; i <= 300; i++ {
		switch {
		case i%37 == 0: // a long line with a match somewhere, often across a piece's edge
			line := []byte(base64Line(rng, 20000+rng.Intn(20000)))
			at := rng.Intn(len(line) - 60)
			copy(line[at:], "#KEY-"+strconv.Itoa(i)+"-")
			b.Write(line)
			want = append(want, i)
		case i%11 == 0:
			fmt.Fprintf(&b, "line %d holds #KEY-%d- here", i, i)
			want = append(want, i)
		default:
			b.WriteString(base64Line(rng, rng.Intn(300)))
		}
		b.WriteByte('\n')
	}
	st := newMemStore(4096)
	saveLog(t, st, logName, b.String())
	for _, req := range []SearchRequest{
		{Query: `#KEY-\d{1,3}-`, Regexp: true, Name: logName, Context: 0},
		{Query: "#key-", Name: logName, Context: 0},
	} {
		whole, _, err := searchOutputs(context.Background(), st, req, Limits{MaxMatches: 100, MaxResultLines: 400, MaxResultBytes: 64 << 10}, searchEnv{now: frozenClock, pieceWork: 1 << 12})
		if err != nil {
			t.Fatal(err)
		}
		if got := lineNumbers(whole.Text); !cmp.Equal(got, want) {
			t.Fatalf("%q, one search: lines %v, want %v", req.Query, got, want)
		}
		var got []int
		calls := 0
		for cur := ""; ; calls++ {
			if calls > 2000 {
				t.Fatal("cursor does not move on")
			}
			req.Cursor = cur
			clock := &tickClock{t: t0, step: 7 * time.Millisecond}
			res, _, err := searchOutputs(context.Background(), st, req, Limits{MaxScanTime: time.Second, MaxMatches: 100, MaxResultLines: 400, MaxResultBytes: 64 << 10},
				searchEnv{now: clock.now, pieceWork: 1 << 12})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, lineNumbers(res.Text)...)
			m := regexp.MustCompile(`cursor="([^"]+)"`).FindStringSubmatch(res.Text)
			if m == nil {
				break
			}
			if !strings.Contains(res.Text, "time bound") {
				t.Fatalf("stopped by something else:\n%s", res.Text)
			}
			cur = m[1]
		}
		if calls < 3 {
			t.Errorf("%q: the time bound stopped the search %d times: the test tests nothing", req.Query, calls)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q over %d calls (-want +got):\n%s", req.Query, calls+1, diff)
		}
	}
}

// lineNumbers returns the numbers of a result's match lines ("N:…").
func lineNumbers(text string) []int {
	var out []int
	for _, l := range matchLines(text) {
		n, _ := strconv.Atoi(l[:strings.IndexByte(l, ':')])
		out = append(out, n)
	}
	return out
}

// The scan's deadline is MaxScanTime, or sooner when the call's context ends sooner (the tool's
// Timeout): a fifth of what is left, at most 1 s, is kept to return the result.
func TestSearchDeadlineFromContext(t *testing.T) {
	for _, tc := range []struct {
		timeout, scan time.Duration
		want          time.Duration // within a few ms: the context's deadline is taken from the clock
	}{
		{0, 5 * time.Second, 5 * time.Second},
		{10 * time.Second, 5 * time.Second, 5 * time.Second},
		{2 * time.Second, 5 * time.Second, 1600 * time.Millisecond},
		{20 * time.Second, time.Minute, 19 * time.Second},
	} {
		ctx := context.Background()
		if tc.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, tc.timeout)
			defer cancel()
		}
		s := &search{lim: Limits{MaxScanTime: tc.scan}, now: time.Now}
		s.setDeadline(ctx)
		if s.bound > tc.want || s.bound < tc.want-100*time.Millisecond {
			t.Errorf("timeout %v, MaxScanTime %v: the scan stops after %v, want %v", tc.timeout, tc.scan, s.bound, tc.want)
		}
	}
}

// FuzzSearchWork: for any output, query and piece budget, each match call stays within the
// budget, a search past its deadline does at most one piece more, and a search no bound stops
// finds exactly the lines a plain line-by-line match finds (when no line needed pieces).
func FuzzSearchWork(f *testing.F) {
	f.Add([]byte("a\nxx#KEY-1-\nb\n"), `#KEY-\d+-`, true, uint8(0))
	f.Add([]byte(strings.Repeat("QUJD", 3000)+"#\n"), `[A-Za-z]{40}#`, true, uint8(2))
	f.Add([]byte("one\ntwo\r\nthree"), `^t.*o$`, true, uint8(5))
	f.Add([]byte(strings.Repeat("needle ", 2000)), "needle", false, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, query string, isRegexp bool, shift uint8) {
		budget := int64(1) << (10 + shift%8)
		st := newMemStore(512)
		if _, err := st.Save(context.Background(), logName, data, "text/plain"); err != nil {
			t.Fatal(err)
		}
		req := SearchRequest{Query: query, Regexp: isRegexp, Name: logName, Context: 0}
		lim := Limits{MaxResultBytes: 1100, MaxMatches: 5}
		clock := &lateClock{t: t0}
		res, s, err := searchOutputs(context.Background(), st, req, lim, searchEnv{now: clock.now, pieceWork: budget})
		if err != nil {
			if !IsInputError(err) {
				t.Fatalf("%v is not an *inputError", err)
			}
			return
		}
		if s.maxPiece > budget || s.work >= 2*budget || len(res.Text) > 1100 {
			t.Fatalf("piece %d, work %d, result %d bytes; budget %d", s.maxPiece, s.work, len(res.Text), budget)
		}
		if !utf8Valid(data) || int64(len(data))*s.m.perByte > 1<<22 {
			return // binary, or too long to search without a time bound here
		}
		// No bound on time: follow the cursors and compare with a plain match of each line.
		var got []int
		for calls, cur := 0, ""; ; calls++ {
			if calls > len(data)+2 {
				t.Fatal("cursor does not move on")
			}
			req.Cursor = cur
			res, s, err = searchOutputs(context.Background(), st, req, lim, searchEnv{now: frozenClock, pieceWork: budget})
			if err != nil {
				t.Fatal(err)
			}
			if s.pieced {
				return
			}
			got = append(got, lineNumbers(res.Text)...)
			m := regexp.MustCompile(`cursor="([^"]+)"`).FindStringSubmatch(res.Text)
			if m == nil {
				break
			}
			cur = m[1]
		}
		var want []int
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if len(data) == 0 {
				break
			}
			if plainMatch(query, isRegexp, line) {
				want = append(want, i+1)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("lines (-plain +search):\n%s", diff)
		}
	})
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

// plainMatch matches one whole line as a search does, without pieces.
func plainMatch(query string, isRegexp bool, line string) bool {
	if isRegexp {
		return regexp.MustCompile(query).MatchString(line)
	}
	return strings.Contains(string(foldASCII(nil, []byte(line))), string(foldASCII(nil, []byte(query))))
}

// stalledStore is a store whose reads after the first wait until ctx ends: a process starved on
// a busy machine past both its scan deadline and the call's own.
type stalledStore struct {
	*memStore
	reads int
}

func (s *stalledStore) ReadChunks(ctx context.Context, name string, version int64, first, count int) ([][]byte, error) {
	if s.reads++; s.reads > 1 {
		<-ctx.Done()
	}
	return s.memStore.ReadChunks(ctx, name, version, first, count)
}

// A search that finds the call's context ended once it can go on (the scan's deadline passed
// too) returns what it found with a cursor, stopped by the time bound — not the context's
// error, which would lose the work done and give the model no way to continue.
func TestSearchStarvedPastItsDeadlineKeepsItsCursor(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		b.WriteString(base64Line(rng, 200))
		b.WriteByte('\n')
	}
	st := &stalledStore{memStore: newMemStore(4096)}
	saveLog(t, st.memStore, logName, b.String())
	// Long enough for the first piece to be matched before it ends on a busy machine too: a
	// search always does that much.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, _, err := searchOutputs(ctx, st, SearchRequest{Query: "#KEY-", Name: logName}, Limits{MaxScanTime: time.Minute},
		searchEnv{now: time.Now, pieceWork: 1 << 10})
	if err != nil {
		t.Fatalf("search: %v; want a result stopped by the time bound", err)
	}
	if st.reads < 2 || ctx.Err() == nil {
		t.Fatalf("%d reads, context %v: the search was not stalled past its deadline", st.reads, ctx.Err())
	}
	if !strings.Contains(res.Text, "time bound") || !regexp.MustCompile(`cursor="[^"]+"`).MatchString(res.Text) {
		t.Errorf("result:\n%s\nwant a stop by the time bound, with a cursor", res.Text)
	}
}
