package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestBytes(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"héllo", 2, "h"}, // é is two bytes: not split
		{"héllo", 3, "hé"},
		{"日本語", 4, "日"},
	}
	for _, tc := range cases {
		if got := Bytes(tc.s, tc.n); got != tc.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestRunes(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"short", 0, "short"},
		{strings.Repeat("a", 40) + strings.Repeat("b", 20), 30, strings.Repeat("a", 20) + " …[30 chars omitted]… " + strings.Repeat("b", 10)},
		{strings.Repeat("日", 40) + "本", 3, "日日 …[38 chars omitted]… 本"},
		// Omitting 22 runes would add a note of 22: no cut.
		{strings.Repeat("x", 52), 30, strings.Repeat("x", 52)},
		{strings.Repeat("x", 53), 30, strings.Repeat("x", 20) + " …[23 chars omitted]… " + strings.Repeat("x", 10)},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, Runes(tc.s, tc.n)); diff != "" {
			t.Errorf("Runes(%q, %d) (-want +got):\n%s", tc.s, tc.n, diff)
		}
	}
}

// Cuts never split a rune, keep the head, and (Runes) keep n runes of s around the note.
func FuzzCut(f *testing.F) {
	for _, s := range []string{"", "hello world", "héllo wörld", "日本語のテキスト", "\xff\xfe broken \xc3"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 1 << 16
		b := Bytes(s, n)
		if !strings.HasPrefix(s, b) || len(b) > max(n, 0) {
			t.Fatalf("Bytes(%q, %d) = %q: not a prefix within n", s, n, b)
		}
		if utf8.ValidString(s) && !utf8.ValidString(b) {
			t.Fatalf("Bytes(%q, %d) = %q splits a rune", s, n, b)
		}
		r := Runes(s, n)
		total := utf8.RuneCountInString(s)
		if n <= 0 || total <= n+noteRunes(total-n) {
			if r != s {
				t.Fatalf("Runes(%q, %d) = %q, want s", s, n, r)
			}
			return
		}
		if got := utf8.RuneCountInString(r); got >= total {
			t.Fatalf("Runes(%q, %d) = %q: %d runes, not shorter than s (%d)", s, n, r, got, total)
		}
		if !strings.Contains(r, " chars omitted]… ") {
			t.Fatalf("Runes(%q, %d) = %q: no note", s, n, r)
		}
		if !utf8.ValidString(s) {
			return
		}
		if !utf8.ValidString(r) {
			t.Fatalf("Runes(%q, %d) = %q splits a rune", s, n, r)
		}
		if head := string([]rune(s)[:n*2/3]); !strings.HasPrefix(r, head) {
			t.Fatalf("Runes(%q, %d) = %q: head %q missing", s, n, r, head)
		}
	})
}
