package agentsmd

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestFindImports(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"start of line", "@a.md", []string{"a.md"}},
		{"after space and tab", "x @a.md\ty\t@b/c.MD", []string{"a.md", "b/c.MD"}},
		{"relative prefixes any extension", "@./x.txt @../y @./", []string{"./x.txt", "../y"}},
		{"trailing punctuation", "see @a.md. and @b.md), @c.md!", []string{"a.md", "b.md", "c.md"}},
		{"email", "me@x.md you@example.com", nil},
		{"mention", "@alice @bob: hi @org/team", nil},
		{"escaped or glued", `\@a.md (@a.md) x@a.md "@a.md"`, nil},
		{"double at", "@@a.md @a@b.md", nil},
		{"code span", "`@a.md` ``x ` @b.md`` @c.md", []string{"c.md"}},
		{"unclosed backticks are literal", "` @a.md", []string{"a.md"}},
		{"fence", "```\n@a.md\n```\n@b.md", []string{"b.md"}},
		{"tilde fence needs a long enough close", "~~~~\n@a.md\n~~~\n@b.md\n~~~~\n@c.md", []string{"c.md"}},
		{"indented fence", "   ```go\n@a.md\n   ```\n@b.md", []string{"b.md"}},
		{"four-space indent is not a fence", "    ```\n@a.md", []string{"a.md"}},
		{"backtick info string with backtick is not a fence", "```a`b\n@a.md", []string{"a.md"}},
		{"unclosed fence hides the rest", "```\n@a.md\n@b.md", nil},
		{"CRLF", "@a.md\r\n@b.md\r\n", []string{"a.md", "b.md"}},
		{"too short", "@.md @md", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tok := range findImports(tc.text) {
				got = append(got, tok.Path)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findImports(%q) (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

func FuzzFindImports(f *testing.F) {
	for _, s := range []string{"@a.md", "x @./b\n```\n@c.md\n```", "`@a.md` @b.md.", "me@x.md", "~~~\n@a.md", "@../x/y.MD)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		prev := 0
		for _, tok := range findImports(text) {
			if tok.Start < prev || tok.End > len(text) || tok.Start >= tok.End {
				t.Fatalf("bad token %+v (prev end %d, len %d)", tok, prev, len(text))
			}
			prev = tok.End
			if text[tok.Start] != '@' || text[tok.Start+1:tok.End] != tok.Path {
				t.Fatalf("token %+v does not match text %q", tok, text[tok.Start:tok.End])
			}
			if tok.Start > 0 && !strings.ContainsRune(" \t\n", rune(text[tok.Start-1])) {
				t.Fatalf("token %+v not after whitespace", tok)
			}
			if !isImportPath(tok.Path) || strings.ContainsAny(tok.Path, " \t\n") {
				t.Fatalf("token %+v is not an import path", tok)
			}
			if utf8.ValidString(text) && !utf8.ValidString(tok.Path) {
				t.Fatalf("token %+v splits a rune", tok)
			}
		}
	})
}
