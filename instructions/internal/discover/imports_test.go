package discover

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
		{"indented code at the start", "    @a.md\n@b.md", []string{"b.md"}},
		{"indented code after a blank line, over blank lines, tab indent", "text\n\n    @a.md\n\n\t@b.md\n   \n        @c.md\n@d.md", []string{"d.md"}},
		{"indented code after a blank line with CRLF", "text\r\n\r\n    @a.md\r\n@b.md\r\n", []string{"b.md"}},
		{"indented code after a heading", "# Examples\n    @a.md\n## Rules @b.md", []string{"b.md"}},
		{"indented code after a closing fence", "```\n```\n    @a.md", nil},
		{"an indented line continues a paragraph", "Style guide:\n    @a.md", []string{"a.md"}},
		{"paragraph of a list item", "- item\n\n    @a.md\n1. item\n\n   @b.md", []string{"a.md", "b.md"}},
		{"indented code in a list item", "- item\n\n      @a.md\n  - nested\n\n        @b.md\n\n    a paragraph of the nested item @c.md", []string{"c.md"}},
		{"leaving the list", "- item\n\ntext\n\n    @a.md", nil},
		{"fence in a nested list item", "- a\n  - b\n\n    ```\n    @a.md\n    ```\n    @b.md", []string{"b.md"}},
		{"thematic break is not a list item", "- - -\n\n    @a.md", nil},
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
	for _, s := range []string{"@a.md", "x @./b\n```\n@c.md\n```", "`@a.md` @b.md.", "me@x.md", "~~~\n@a.md", "@../x/y.MD)",
		"x\n\n    @a.md\n@b.md", "- a\n\n      @a.md\n  1. b\n\n\t@c.md", "# h\n\t@a.md\n* * *\n    @b.md"} {
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
		// The same text as one indented code block has no imports at all.
		code := "    " + strings.ReplaceAll(text, "\n", "\n    ")
		if toks := findImports(code); len(toks) > 0 {
			t.Fatalf("import %+v found in indented code %q", toks[0], code)
		}
	})
}
