package refs

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokens: every token is a substring of the text, within the length bounds, trimmed, and
// tokenizing a token gives itself.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"grep -rn parse_line ./src/parse.py:12", "HAT136 2024-05-20 mia_li_3668", "Ünïcode «x»…", "....////----", "a\x80\xffbcd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		Each(text, func(tok string) {
			if !strings.Contains(text, tok) {
				t.Fatalf("token %q not in the text", tok)
			}
			if len(tok) < minTokenBytes || len(tok) > maxTokenBytes || strings.Trim(tok, "./-") != tok {
				t.Fatalf("token %q breaks the rules", tok)
			}
			if !utf8.ValidString(tok) {
				return // invalid bytes count as letters; no round trip promised
			}
			if again := Tokens(tok); len(again) != 1 || again[0] != tok {
				t.Fatalf("Tokens(%q) = %q", tok, again)
			}
		})
	})
}
