package readback

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Range
		wantErr bool
	}{
		{in: "", want: Range{Unit: Lines, Start: 1}},
		{in: "120-180", want: Range{Unit: Lines, Start: 120, End: 180, Bounded: true}},
		{in: " 120 : 180 ", want: Range{Unit: Lines, Start: 120, End: 180, Bounded: true}},
		{in: "120..180", want: Range{Unit: Lines, Start: 120, End: 180, Bounded: true}},
		{in: "120–180", want: Range{Unit: Lines, Start: 120, End: 180, Bounded: true}},
		{in: "lines=5-5", want: Range{Unit: Lines, Start: 5, End: 5, Bounded: true}},
		{in: "3000", want: Range{Unit: Lines, Start: 3000}},
		{in: "3000-", want: Range{Unit: Lines, Start: 3000}},
		{in: "-50", want: Range{Unit: Lines, Start: 1, Last: 50}},
		{in: "120+40", want: Range{Unit: Lines, Start: 120, End: 159, Bounded: true}},
		{in: "bytes=0-999", want: Range{Unit: Bytes, Start: 0, End: 999, Bounded: true}},
		{in: "BYTES=5000-", want: Range{Unit: Bytes, Start: 5000}},
		{in: "bytes=-500", want: Range{Unit: Bytes, Last: 500}},
		{in: "bytes=", want: Range{Unit: Bytes}},
		{in: "0", wantErr: true},
		{in: "0-10", wantErr: true},
		{in: "180-120", wantErr: true},
		{in: "-0", wantErr: true},
		{in: "-", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "1-2-3", wantErr: true},
		{in: "120,180", wantErr: true},
		{in: "99999999999999999999", wantErr: true},
		{in: "1+0", wantErr: true},
		{in: "../etc/passwd", wantErr: true},
	} {
		got, err := ParseRange(tc.in)
		if tc.wantErr {
			if !IsInputError(err) {
				t.Errorf("ParseRange(%q) = %+v, %v; want an *inputError", tc.in, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRange(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(Range{})); diff != "" {
			t.Errorf("ParseRange(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// FuzzParseRange: any input parses to a sane range or an *inputError, never panics.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"", "120-180", "3000", "-50", "bytes=0-999", "bytes=-1", "1+2", "1..2", "5–7", "lines=3", "9999999999999999999999", " - ", "+", "bytes=7-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			if !IsInputError(err) {
				t.Fatalf("ParseRange(%q): error %v is not an *inputError", s, err)
			}
			return
		}
		switch {
		case r.Start < 0 || r.End < 0 || r.Last < 0 || r.Start > maxRangeNumber*2 || r.End > maxRangeNumber*2:
			t.Fatalf("ParseRange(%q) = %+v: out of range", s, r)
		case r.Unit == Lines && r.Start < 1:
			t.Fatalf("ParseRange(%q) = %+v: lines start at 1", s, r)
		case r.Bounded && r.End < r.Start:
			t.Fatalf("ParseRange(%q) = %+v: ends before it starts", s, r)
		}
	})
}
