package truncate

import (
	"errors"
	"fmt"
	"github.com/adkctx/adkctx/internal/config"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func numberedLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %03d\n", i)
	}
	return b.String()
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg     Config
		wantErr bool
	}{
		{Config{}, false},
		{Config{MaxBytes: 64, MaxLines: 3}, false},
		{Config{MaxBytes: 1 << 20, MaxLines: 100000}, false},
		{Config{MaxBytes: -1}, true},
		{Config{MaxBytes: 63}, true},
		{Config{MaxLines: 2}, true},
		{Config{MaxLines: -5}, true},
		{Config{MaxBytes: 1, MaxLines: 1}, true},
	} {
		err := tc.cfg.Validate()
		if (err != nil) != tc.wantErr {
			t.Errorf("%+v.Validate() = %v, want error %v", tc.cfg, err, tc.wantErr)
		}
		var ce *config.Error
		if err != nil && !errors.As(err, &ce) {
			t.Errorf("%+v.Validate() = %v, not a *ConfigError", tc.cfg, err)
		}
	}
}

func TestText(t *testing.T) {
	hundred := numberedLines(100)
	huge := strings.Repeat("x", 5000) + "BUILD FAILED: exit status 2"
	for _, tc := range []struct {
		name      string
		in        string
		cfg       Config
		note      string
		want      string
		wantStats Stats
	}{
		{
			name:      "empty",
			in:        "",
			want:      "",
			wantStats: Stats{},
		},
		{
			name:      "short unchanged",
			in:        "ok\n",
			want:      "ok\n",
			wantStats: Stats{OriginalBytes: 3, KeptBytes: 3, OriginalLines: 1},
		},
		{
			name:      "exactly at the line limit",
			in:        numberedLines(10),
			cfg:       Config{MaxLines: 10},
			want:      numberedLines(10),
			wantStats: Stats{OriginalBytes: 90, KeptBytes: 90, OriginalLines: 10},
		},
		{
			name: "too many lines: 4 head lines, marker, 5 tail lines",
			in:   hundred,
			cfg:  Config{MaxLines: 10},
			want: "line 000\nline 001\nline 002\nline 003\n" +
				"[... output truncated: 91 lines and 819 bytes omitted; original 100 lines, 900 bytes ...]\n" +
				"line 095\nline 096\nline 097\nline 098\nline 099\n",
			wantStats: Stats{Truncated: true, StringsCut: 1, OriginalBytes: 900, OriginalLines: 100,
				KeptBytes: 81, OmittedLines: 91, OmittedBytes: 819},
		},
		{
			name: "note in the marker, no final newline",
			in:   strings.TrimSuffix(hundred, "\n"),
			cfg:  Config{MaxLines: 4},
			note: `full output saved as artifact "tool-output-xyz.txt"`,
			want: "line 000\n" +
				`[... output truncated: 97 lines and 873 bytes omitted; original 100 lines, 899 bytes; full output saved as artifact "tool-output-xyz.txt" ...]` + "\n" +
				"line 098\nline 099",
			wantStats: Stats{Truncated: true, StringsCut: 1, OriginalBytes: 899, OriginalLines: 100,
				KeptBytes: 26, OmittedLines: 97, OmittedBytes: 873},
		},
		{
			name: "one huge line keeps its start and its end",
			in:   huge,
			cfg:  Config{MaxBytes: 256},
			want: strings.Repeat("x", 83) + "\n" +
				"[... output truncated: 0 lines and 4861 bytes omitted; original 1 lines, 5027 bytes ...]\n" +
				strings.Repeat("x", 56) + "BUILD FAILED: exit status 2",
			wantStats: Stats{Truncated: true, StringsCut: 1, OriginalBytes: 5027, OriginalLines: 1,
				KeptBytes: 166, OmittedLines: 0, OmittedBytes: 4861},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := Text(tc.in, tc.cfg, tc.note)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Text() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStats, st); diff != "" {
				t.Errorf("Text() stats mismatch (-want +got):\n%s", diff)
			}
			checkText(t, tc.in, got, tc.cfg, tc.note)
		})
	}
}

func TestTextUTF8(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"two-byte runes", strings.Repeat("é", 3000)},
		{"three-byte runes", strings.Repeat("日本語", 1000) + "\n終わり"},
		{"four-byte runes", strings.Repeat("😀", 999)},
		{"mixed lines", strings.Repeat("ascii line\n日本語の行\n😀😀\n", 200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mb := range []int{64, 65, 66, 67, 100, 257, 1000} {
				cfg := Config{MaxBytes: mb, MaxLines: 7}
				got, st := Text(tc.in, cfg, "")
				if !utf8.ValidString(got) {
					t.Fatalf("MaxBytes %d: invalid UTF-8 out: %q", mb, got)
				}
				if !st.Truncated {
					t.Fatalf("MaxBytes %d: not truncated", mb)
				}
				checkText(t, tc.in, got, cfg, "")
			}
		})
	}
}

func TestTextInvalidUTF8DoesNotPanic(t *testing.T) {
	in := strings.Repeat("\xff\xfe\x80\x80\x80", 1000) + "\n" + strings.Repeat("\x80", 500)
	got, st := Text(in, Config{MaxBytes: 100}, "")
	if !st.Truncated || !strings.Contains(got, MarkerPrefix) {
		t.Fatalf("Text(invalid) = %q, %+v; want a cut", got, st)
	}
	checkText(t, in, got, Config{MaxBytes: 100}, "")
}

func TestTextIdempotent(t *testing.T) {
	for _, in := range []string{numberedLines(1000), strings.Repeat("z", 100000), strings.Repeat("ab\n", 5000)} {
		cfg := Config{MaxBytes: 2048, MaxLines: 50}
		once, _ := Text(in, cfg, `saved as "x"`)
		twice, st := Text(once, cfg, `saved as "x"`)
		if st.Truncated {
			t.Errorf("second Text() cut again: %+v", st)
		}
		if diff := cmp.Diff(once, twice); diff != "" {
			t.Errorf("Text() not idempotent (-once +twice):\n%s", diff)
		}
	}
}

// checkText verifies the documented properties of out = Text(in, cfg, note).
func checkText(t *testing.T, in, out string, cfg Config, note string) {
	t.Helper()
	eff := cfg.WithDefaults()
	fits := len(in) <= eff.MaxBytes && countLines(in) <= eff.MaxLines
	if fits {
		if out != in {
			t.Fatalf("input within limits was changed: %q -> %q", in, out)
		}
		return
	}
	i := strings.Index(out, MarkerPrefix)
	if i < 0 {
		t.Fatalf("cut output has no marker: %q", out)
	}
	j := strings.Index(out[i:], "\n")
	if j < 0 {
		t.Fatalf("marker line not terminated: %q", out)
	}
	markerLine := out[i : i+j+1]
	if !strings.HasSuffix(markerLine, " ...]\n") || (note != "" && !strings.Contains(markerLine, cleanNote(note))) {
		t.Fatalf("bad marker line %q", markerLine)
	}
	head := out[:i]
	if strings.HasSuffix(head, "\n") && !strings.HasPrefix(in, head) {
		// the separator newline may have been added after a partial line
		if !strings.HasPrefix(in, strings.TrimSuffix(head, "\n")) {
			t.Fatalf("head %q is not a prefix of the input", head)
		}
	} else if !strings.HasPrefix(in, head) {
		t.Fatalf("head %q is not a prefix of the input", head)
	}
	tail := out[i+j+1:]
	if !strings.HasSuffix(in, tail) {
		t.Fatalf("tail %q is not a suffix of the input", tail)
	}
	if len(in) > 0 && len(tail) == 0 && len(in) >= utf8.UTFMax {
		// The tail is always kept unless the last rune alone exceeds its budget.
		t.Fatalf("tail dropped for input of %d bytes", len(in))
	}
	if bound := eff.MaxBytes + len(markerLine) + 1; len(out) > bound {
		t.Fatalf("len(out) = %d > MaxBytes + marker line = %d", len(out), bound)
	}
	if len(markerLine)+2 <= eff.MaxBytes/2 {
		if len(out) > eff.MaxBytes {
			t.Fatalf("len(out) = %d > MaxBytes %d although the marker fits", len(out), eff.MaxBytes)
		}
	}
	if got := countLines(out); got > eff.MaxLines {
		t.Fatalf("out has %d lines > MaxLines %d", got, eff.MaxLines)
	}
	if utf8.ValidString(in) && !utf8.ValidString(out) {
		t.Fatalf("valid UTF-8 in, invalid out: %q", out)
	}
}

func FuzzText(f *testing.F) {
	f.Add("hello\nworld\n", uint8(1), uint16(64), uint8(3), "")
	f.Add(numberedLines(50), uint8(0), uint16(200), uint8(5), "note")
	f.Add("日本語", uint8(100), uint16(70), uint8(3), "")
	f.Add("a\n", uint8(255), uint16(0), uint8(0), "saved")
	f.Add("\xff\xfe\n\x80", uint8(40), uint16(64), uint8(3), "")
	f.Add("x", uint8(200), uint16(64), uint8(3), "")
	f.Fuzz(func(t *testing.T, in string, repeat uint8, maxBytes uint16, maxLines uint8, note string) {
		if len(note) > 200 {
			note = note[:200]
		}
		// Repeat short inputs so that most cases exceed the limits and get cut.
		if len(in) <= 1024 {
			in = strings.Repeat(in, int(repeat)+1)
		}
		cfg := Config{MaxBytes: int(maxBytes), MaxLines: int(maxLines)}
		out, st := Text(in, cfg, note)
		// Value cuts []byte leaves and JSON texts with the same code.
		if outB, stB := cutText([]byte(in), cfg.WithDefaults(), note, -1); outB != out || stB != st {
			t.Fatalf("[]byte cut differs: %q %+v, string cut %q %+v", outB, stB, out, st)
		}
		if st.Truncated != (out != in) {
			t.Fatalf("Truncated=%v but out != in is %v", st.Truncated, out != in)
		}
		if st.Truncated != strings.Contains(out, MarkerPrefix) && !strings.Contains(in, MarkerPrefix) {
			t.Fatalf("marker present=%v, Truncated=%v", strings.Contains(out, MarkerPrefix), st.Truncated)
		}
		if st.Truncated && st.KeptBytes+st.OmittedBytes != len(in) {
			t.Fatalf("kept %d + omitted %d != %d", st.KeptBytes, st.OmittedBytes, len(in))
		}
		if !strings.Contains(in, MarkerPrefix) {
			checkText(t, in, out, cfg, note)
		}
		if eff := cfg.WithDefaults(); len(out) <= eff.MaxBytes {
			if again, st2 := Text(out, cfg, note); st2.Truncated || again != out {
				t.Fatalf("not idempotent: %q -> %q", out, again)
			}
		}
	})
}
