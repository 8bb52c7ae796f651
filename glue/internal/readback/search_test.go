package readback

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// matchLines returns the "N:text" lines of a search result.
func matchLines(res string) []string {
	var out []string
	re := regexp.MustCompile(`^\d+:`)
	for _, l := range strings.Split(res, "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func TestSearchOneOutput(t *testing.T) {
	data := testLog(60000) // ≈ 2.7 MB
	lines := strings.Split(data, "\n")
	lines[30000] = "FAIL TestCheckout id=REQ-7f3a9c expected 200 got 500"
	data = strings.Join(lines, "\n")
	st := newMemStore(defaultChunkBytes)
	saveLog(t, st, logName, data)
	for _, tc := range []struct {
		name  string
		req   SearchRequest
		want  []string
		extra string
	}{
		{"substring any case", SearchRequest{Query: "req-7F3A9C", Name: logName}, []string{"30001:" + lines[30000]}, "30000-" + lines[29999]},
		{"regexp", SearchRequest{Query: `id=REQ-[0-9a-f]{6}\b`, Regexp: true, Name: logName, Context: 1}, []string{"30001:" + lines[30000]}, "30002-" + lines[30001]},
		{"all outputs", SearchRequest{Query: "REQ-7f3a9c"}, []string{"30001:" + lines[30000]}, "== " + logName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The whole output is read: not within the default 5 s time bound under -race on a
			// loaded machine (make test stopped at 3.1 of 3.5 MB). TestSearchBoundsAndCursor tests
			// the bound.
			res, err := SearchOutputs(context.Background(), st, tc.req, Limits{MaxScanTime: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, matchLines(res.Text)); diff != "" {
				t.Errorf("matches (-want +got):\n%s\n%s", diff, res.Text)
			}
			if !strings.Contains(res.Text, tc.extra) || !strings.Contains(res.Text, "[end of matches]") {
				t.Errorf("result lacks %q or its end note:\n%s", tc.extra, res.Text)
			}
			if res.BytesRead != int64(len(data)) {
				t.Errorf("read %d bytes, want the output's %d", res.BytesRead, len(data))
			}
		})
	}
}

// A search that a bound stops says so, and its cursor continues it: following cursors finds
// every match exactly once, whatever stopped each call.
func TestSearchBoundsAndCursor(t *testing.T) {
	st := newMemStore(1024)
	var want []string
	for o := 0; o < 3; o++ {
		var b strings.Builder
		for i := 1; i <= 2000; i++ {
			if i%97 == 0 {
				fmt.Fprintf(&b, "needle %d in output %d\n", i, o)
				want = append(want, fmt.Sprintf("needle %d in output %d", i, o))
			} else {
				fmt.Fprintf(&b, "hay %d\n", i)
			}
		}
		saveLog(t, st, fmt.Sprintf("%sgen-c%d.txt", OutputPrefix, o), b.String())
	}
	// Newest first: output 2, then 1, then 0.
	want = append(append(want[40:], want[20:40]...), want[:20]...)
	for _, lim := range []Limits{{MaxScanBytes: 5000}, {MaxMatches: 7}, {MaxResultBytes: 1100}, {MaxScanTime: time.Nanosecond}, {}} {
		t.Run(fmt.Sprintf("%+v", lim), func(t *testing.T) {
			var got []string
			cur := ""
			for calls := 0; ; calls++ {
				if calls > 500 {
					t.Fatal("cursor does not advance")
				}
				res, err := SearchOutputs(context.Background(), st, SearchRequest{Query: "needle", Context: 0, Cursor: cur}, lim)
				if err != nil {
					t.Fatal(err)
				}
				if lim.MaxResultBytes > 0 && len(res.Text) > lim.MaxResultBytes {
					t.Fatalf("result %d bytes over %d", len(res.Text), lim.MaxResultBytes)
				}
				if lim.MaxScanBytes > 0 && res.BytesRead > lim.MaxScanBytes+1024 {
					t.Fatalf("read %d bytes, bound %d", res.BytesRead, lim.MaxScanBytes)
				}
				for _, l := range matchLines(res.Text) {
					got = append(got, l[strings.IndexByte(l, ':')+1:])
				}
				i := strings.Index(res.Text, `cursor="`)
				if i < 0 {
					break
				}
				if !strings.Contains(res.Text, "stopped early") {
					t.Fatalf("cursor without a stop note:\n%s", res.Text)
				}
				cur = res.Text[i+len(`cursor="`):]
				cur = cur[:strings.IndexByte(cur, '"')]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("matches over all calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSearchHostileInput(t *testing.T) {
	st := newMemStore(defaultChunkBytes)
	saveLog(t, st, logName, strings.Repeat("a", 200000)+"\n")
	if _, err := st.Save(context.Background(), OutputPrefix+"x.bin", []byte{0xff, 0, 1}, "application/octet-stream"); err != nil {
		t.Fatal(err)
	}
	// A pathological pattern for backtracking engines is linear in RE2.
	res, err := SearchOutputs(context.Background(), st, SearchRequest{Query: `(a+)+$b`, Regexp: true}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "[no match]") || !strings.Contains(res.Text, "1 binary outputs skipped") {
		t.Errorf("result:\n%s", res.Text)
	}
	for _, tc := range []struct {
		req  SearchRequest
		want string
	}{
		{SearchRequest{Query: ""}, "query is empty"},
		{SearchRequest{Query: "(", Regexp: true}, "not a valid regular expression"},
		{SearchRequest{Query: strings.Repeat("a", 600)}, "at most 512"},
		{SearchRequest{Query: "a", Name: "../secret"}, "not a saved tool output"},
		{SearchRequest{Query: "a", Name: OutputPrefix + "x.bin"}, "binary"},
		{SearchRequest{Query: "a", Cursor: "x"}, "cursor"},
		{SearchRequest{Query: "a", Context: 99}, "context"},
	} {
		_, err := SearchOutputs(context.Background(), st, tc.req, Limits{})
		if !IsInputError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SearchOutputs(%+v) = %v; want an *inputError saying %q", tc.req, err, tc.want)
		}
	}
}
