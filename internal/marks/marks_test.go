package marks_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/internal/marks"
	"github.com/adkctx/adkctx/processors/truncate"
)

// marks.Find reads back the marks Text writes, with their figures and note, and nothing else: not
// the marks of elements Value leaves out, not text that only starts like a mark.
func TestFind(t *testing.T) {
	long := strings.Repeat("a line of output\n", 500)
	cut := func(note string) string {
		s, _ := truncate.Text(long, truncate.Config{MaxBytes: 1024, MaxLines: 20}, note)
		return s
	}
	_, st := truncate.Text(long, truncate.Config{MaxBytes: 1024, MaxLines: 20}, "")
	base := marks.Mark{OmittedLines: st.OmittedLines, OmittedBytes: st.OmittedBytes, OriginalLines: 500, OriginalBytes: len(long)}
	with := func(note string) marks.Mark { m := base; m.Note = note; return m }
	for _, tc := range []struct {
		name string
		s    string
		want []marks.Mark
	}{
		{"no note", cut(""), []marks.Mark{base}},
		{"a note", cut(`full output saved as "x.txt"`), []marks.Mark{with(`full output saved as "x.txt"`)}},
		{"a note holding the end", cut("a ...] b"), []marks.Mark{with("a ...] b")}},
		{"two cuts", cut("one") + cut("two"), []marks.Mark{with("one"), with("two")}},
		{"elements left out", "[" + marks.Prefix + "3 entries omitted ...]", nil},
		{"not a number", marks.Prefix + "x lines and 3 bytes omitted; original 4 lines, 5 bytes ...]", nil},
		{"a leading zero", marks.Prefix + "01 lines and 3 bytes omitted; original 4 lines, 5 bytes ...]", nil},
		{"unended", marks.Prefix + "1 lines and 3 bytes omitted; original 4 lines, 5 bytes\n ...]", nil},
		{"an empty note", marks.Prefix + "1 lines and 3 bytes omitted; original 4 lines, 5 bytes;  ...]", nil},
		{"none", long, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []marks.Mark
			for _, f := range marks.Find(tc.s) {
				got = append(got, f.Mark)
				if line := tc.s[f.Start:f.End]; line != f.String() {
					t.Errorf("mark at [%d, %d) is %q; String gives %q", f.Start, f.End, line, f.String())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("marks.Find (-want +got):\n%s", diff)
			}
		})
	}
}

// A mark's String keeps a note longer than Text's 200 bytes whole, on one line.
func TestMarkStringKeepsLongNotes(t *testing.T) {
	note := strings.Repeat("n", 300) + "\nend"
	s := marks.Mark{OmittedLines: 1, OmittedBytes: 2, OriginalLines: 3, OriginalBytes: 4, Note: note}.String()
	got := marks.Find(s)
	if len(got) != 1 || got[0].Note != strings.ReplaceAll(note, "\n", " ") {
		t.Errorf("marks.Find(%q) = %+v", s, got)
	}
}

// Whatever the text, marks.Find neither panics nor returns a span that is not a mark; the mark Text
// writes is found with Text's figures.
func FuzzFind(f *testing.F) {
	f.Add("line\n", "note", 64)
	f.Add(marks.Prefix+"1 lines and 2 bytes omitted; original 3 lines, 4 bytes ...]", "", 100)
	f.Add("\xff"+marks.Prefix, " ...]", 1000)
	f.Fuzz(func(t *testing.T, s, note string, maxBytes int) {
		for _, fd := range marks.Find(s) {
			if fd.Start < 0 || fd.End > len(s) || fd.Start >= fd.End || !strings.HasPrefix(s[fd.Start:], marks.Prefix) {
				t.Fatalf("span [%d, %d) of %q", fd.Start, fd.End, s)
			}
			if line := s[fd.Start:fd.End]; utf8.ValidString(line) && line != fd.String() {
				t.Fatalf("mark %q; String gives %q", line, fd.String())
			}
		}
		if strings.Contains(s, marks.Prefix) || strings.Contains(note, marks.Prefix) {
			return // the text's own marks would be found too
		}
		text := strings.Repeat(s+"\n", 50)
		cut, st := truncate.Text(text, truncate.Config{MaxBytes: max(maxBytes%4096, 64), MaxLines: 10}, note)
		if !st.Truncated {
			return
		}
		want := marks.Mark{OmittedLines: st.OmittedLines, OmittedBytes: st.OmittedBytes, OriginalLines: st.OriginalLines, OriginalBytes: st.OriginalBytes, Note: writtenNote(note)}
		found := false
		for _, fd := range marks.Find(cut) {
			found = found || fd.Mark == want
		}
		if !found {
			t.Fatalf("the mark of %+v is not found in %q", want, fmt.Sprintf("%.400s", cut))
		}
	})
}

// writtenNote is note as truncate.Text writes it in a mark: cut to 200 bytes at a rune's start,
// then one valid line.
func writtenNote(note string) string {
	if len(note) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(note[cut]) {
			cut--
		}
		note = note[:cut]
	}
	return marks.CleanLine(note)
}
