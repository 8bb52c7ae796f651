package errkind

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"
)

// oneLine parses whatever a provider or proxy sent: the result must be one valid UTF-8 line
// within the cap, whatever the input.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "plain", "a\r\nb\n\nc", "\xff\xfe bad utf8", "é" + strings.Repeat("ü", 150), "\u2028\u202e\x1b[31m", strings.Repeat(" ", 300)} {
		f.Add(s, 200)
	}
	f.Add("abcdef", 3)
	f.Add("日本語", 4)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = limit % 1024
		if limit < 0 {
			limit = -limit
		}
		got := oneLine(s, limit)
		if len(got) > limit {
			t.Errorf("oneLine(%q, %d) = %q: %d bytes", s, limit, got, len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("oneLine(%q, %d) = %q: invalid UTF-8", s, limit, got)
		}
		if strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") {
			t.Errorf("oneLine(%q, %d) = %q: untrimmed or repeated spaces", s, limit, got)
		}
		for _, r := range got {
			if r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Errorf("oneLine(%q, %d) = %q: keeps %U", s, limit, got, r)
			}
		}
		// Whatever the provider sent, the model message stays one line.
		msg := modelMessage(genai.APIError{Code: 500, Status: s, Message: s}, s)
		if strings.ContainsAny(msg, "\r\n") || len(msg) > len("model API 500")+3*maxField+maxMessage+20 {
			t.Errorf("modelMessage = %q", msg)
		}
	})
}
