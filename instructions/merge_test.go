package instructions

import (
	"github.com/adkctx/adkctx/internal/config"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/instructions/internal/discover"
)

func disc(files ...discover.File) *discover.Discovery {
	return &discover.Discovery{Root: "/r", WorkDir: "/r/a", Files: files}
}

func file(rel, content string) discover.File {
	return discover.File{Path: "/r/" + rel, RelPath: rel, Scope: agentsmd.ScopeProject, Content: content}
}

func global(content string) discover.File {
	return discover.File{Path: "/home/u/.config/adkctx/AGENTS.md", RelPath: "~/.config/adkctx/AGENTS.md", Scope: agentsmd.ScopeGlobal, Content: content}
}

const preamble = header + "\n\n" + precedence + "\n"

func TestMergeFormat(t *testing.T) {
	d := disc(global("Be brief.\n"), file("AGENTS.md", "Root {rules}.\n\n"), file("a/AGENTS.md", "Leaf."))
	d.Skipped = []agentsmd.Skip{{Path: "/r/a/AGENTS.override.md", Reason: "binary file"}}
	m := merge(d, Config{})
	want := preamble +
		"\n<agents_md path=\"~/.config/adkctx/AGENTS.md\" scope=\"global\">\nBe brief.\n</agents_md>\n" +
		"\n<agents_md path=\"AGENTS.md\">\nRoot {rules}.\n</agents_md>\n" +
		"\n<agents_md path=\"a/AGENTS.md\">\nLeaf.\n</agents_md>\n"
	if diff := cmp.Diff(want, m.Text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	wantM := Merged{
		Text: want, Bytes: len(want), Root: "/r", WorkDir: "/r/a",
		Sources: []Source{
			{Path: "~/.config/adkctx/AGENTS.md", AbsPath: "/home/u/.config/adkctx/AGENTS.md", Scope: "global", Bytes: 9, KeptBytes: 9},
			{Path: "AGENTS.md", AbsPath: "/r/AGENTS.md", Scope: "project", Bytes: 13, KeptBytes: 13},
			{Path: "a/AGENTS.md", AbsPath: "/r/a/AGENTS.md", Scope: "project", Bytes: 5, KeptBytes: 5},
		},
		Skipped: d.Skipped,
	}
	if diff := cmp.Diff(wantM, m); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
}

func TestMergeEmpty(t *testing.T) {
	if diff := cmp.Diff(Merged{}, merge(nil, Config{})); diff != "" {
		t.Errorf("nil (-want +got):\n%s", diff)
	}
	d := disc()
	d.Skipped = []agentsmd.Skip{{Path: "/r/AGENTS.md", Reason: "empty or whitespace-only file"}}
	want := Merged{Root: "/r", WorkDir: "/r/a", Skipped: d.Skipped}
	if diff := cmp.Diff(want, merge(d, Config{})); diff != "" {
		t.Errorf("no files (-want +got):\n%s", diff)
	}
}

type srcState struct {
	Path            string
	Kept            int
	Truncated, Omit bool
}

func TestMergeBudget(t *testing.T) {
	big := func(c string, n int) string { return strings.Repeat(c, n) }
	tests := []struct {
		name      string
		files     []discover.File
		max       int
		want      []srcState
		markers   []string // substrings that must be in the text
		truncated bool
		tight     bool // the text must use the budget up to a few bytes
	}{
		{
			name:  "fits exactly",
			files: []discover.File{file("AGENTS.md", big("r", 1000)), file("a/AGENTS.md", "leaf")},
			max:   len(preamble) + len("\n<agents_md path=\"AGENTS.md\">\n\n</agents_md>\n")*1 + 1000 + len("\n<agents_md path=\"a/AGENTS.md\">\n\n</agents_md>\n") + 4,
			want:  []srcState{{"AGENTS.md", 1000, false, false}, {"a/AGENTS.md", 4, false, false}},
			tight: true,
		},
		{
			name:      "root cut, leaf survives",
			files:     []discover.File{file("AGENTS.md", big("r", 5000)), file("a/AGENTS.md", big("l", 1000))},
			max:       4096,
			want:      []srcState{{"AGENTS.md", 2651, true, false}, {"a/AGENTS.md", 1000, false, false}},
			tight:     true,
			markers:   []string{`[adkctx: AGENTS.md file "AGENTS.md" was cut to fit the instruction budget: kept the first 2651 of 5000 bytes]`},
			truncated: true,
		},
		{
			name:      "global omitted first, then root cut, leaf survives",
			files:     []discover.File{global(big("g", 3000)), file("AGENTS.md", big("r", 3000)), file("a/AGENTS.md", big("l", 1500))},
			max:       4096,
			want:      []srcState{{"~/.config/adkctx/AGENTS.md", 0, true, true}, {"AGENTS.md", 2041, true, false}, {"a/AGENTS.md", 1500, false, false}},
			tight:     true,
			markers:   []string{`[adkctx: AGENTS.md file "~/.config/adkctx/AGENTS.md" (3000 bytes) was omitted to fit the instruction budget]`, `kept the first 2041 of 3000 bytes]`},
			truncated: true,
		},
		{
			name:      "leaf alone over budget: others collapse, leaf head kept",
			files:     []discover.File{global("g"), file("AGENTS.md", "r"), file("a/AGENTS.md", "HEAD"+big("l", 5000))},
			max:       2048,
			want:      []srcState{{"~/.config/adkctx/AGENTS.md", 0, true, true}, {"AGENTS.md", 0, true, true}, {"a/AGENTS.md", 1552, true, false}},
			tight:     true,
			markers:   []string{`[adkctx: 2 less specific AGENTS.md file(s) (2 bytes) omitted to fit the instruction budget]`, "\nHEAD", `[adkctx: AGENTS.md file "a/AGENTS.md" was cut to fit the instruction budget: kept the first 1552 of 5004 bytes]`},
			truncated: true,
		},
		{
			name:      "cut on a rune boundary",
			files:     []discover.File{file("AGENTS.md", big("é", 3000)), file("a/AGENTS.md", "leaf")},
			max:       2048,
			want:      []srcState{{"AGENTS.md", 1598, true, false}, {"a/AGENTS.md", 4, false, false}},
			tight:     true,
			markers:   []string{"kept the first 1598 of 6000 bytes]"},
			truncated: true,
		},
		{
			name:      "tiny global kept whole (its omission marker would be longer), root cut",
			files:     []discover.File{global("Be brief."), file("AGENTS.md", big("root rule. ", 150)), file("a/AGENTS.md", "Leaf rule.")},
			max:       1200,
			want:      []srcState{{"~/.config/adkctx/AGENTS.md", 9, false, false}, {"AGENTS.md", 660, true, false}, {"a/AGENTS.md", 10, false, false}},
			markers:   []string{`[adkctx: AGENTS.md file "AGENTS.md" was cut to fit the instruction budget: kept the first 660 of 1649 bytes]`},
			truncated: true,
			tight:     true,
		},
		{
			name:      "invalid budget: nothing",
			files:     []discover.File{file("AGENTS.md", "r")},
			max:       100,
			want:      []srcState{{"AGENTS.md", 0, true, true}},
			truncated: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := merge(disc(tc.files...), Config{MaxBytes: tc.max})
			var got []srcState
			for _, s := range m.Sources {
				got = append(got, srcState{s.Path, s.KeptBytes, s.Truncated, s.Omitted})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
			if len(m.Text) > tc.max || m.Bytes != len(m.Text) {
				t.Errorf("len(Text) = %d, Bytes = %d, budget %d", len(m.Text), m.Bytes, tc.max)
			}
			if !utf8.ValidString(m.Text) {
				t.Error("invalid UTF-8")
			}
			if tc.tight && len(m.Text) < tc.max-5 {
				t.Errorf("len(Text) = %d wastes the budget %d", len(m.Text), tc.max)
			}
			if m.Truncated != tc.truncated || strings.Contains(m.Text, markerPrefix) != (tc.truncated && m.Text != "") {
				t.Errorf("Truncated = %v, marker in text = %v, want %v", m.Truncated, strings.Contains(m.Text, markerPrefix), tc.truncated)
			}
			for _, mk := range tc.markers {
				if !strings.Contains(m.Text, mk) {
					t.Errorf("text lacks %q:\n%s", mk, m.Text)
				}
			}
			for i, s := range m.Sources {
				if body := strings.TrimRight(tc.files[i].Content, " \t\r\n"); !s.Omitted && !strings.Contains(m.Text, body[:s.KeptBytes]) {
					t.Errorf("source %s: kept head not in text", s.Path)
				}
			}
		})
	}
}

func TestMergeLongPathsStayInBudget(t *testing.T) {
	long := strings.Repeat("very-long-directory-name/", 40) + "AGENTS.md"
	var files []discover.File
	for i := 0; i < 30; i++ {
		files = append(files, file(strings.Repeat("d/", i)+long, strings.Repeat("x", 200)))
	}
	for _, max := range []int{minMaxBytes, 2000, 5000, 10000} {
		m := merge(disc(files...), Config{MaxBytes: max})
		if len(m.Text) > max || !m.Truncated || !strings.Contains(m.Text, markerPrefix) || !utf8.ValidString(m.Text) {
			t.Errorf("max %d: len %d, truncated %v", max, len(m.Text), m.Truncated)
		}
		if leaf := m.Sources[len(m.Sources)-1]; leaf.Omitted {
			t.Errorf("max %d: leaf omitted: %+v", max, leaf)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{}, true}, {Config{MaxBytes: minMaxBytes}, true}, {Config{MaxBytes: minMaxBytes - 1}, false},
		{Config{MaxBytes: -1}, false}, {Config{MaxCachedDirs: -1}, false},
	} {
		err := tc.cfg.Validate()
		var ce *config.Error
		if (err == nil) != tc.ok || (err != nil && !errorsAs(err, &ce)) {
			t.Errorf("Validate(%+v) = %v", tc.cfg, err)
		}
	}
}

func FuzzMerge(f *testing.F) {
	// Contents are repeated rep times so that small fuzz inputs still
	// overflow the budget (and minimization stays fast).
	f.Add("global", "root", "leaf", uint8(0), uint16(0))
	f.Add("éé", "rules\n", "leaf {x}", uint8(200), uint16(100))
	f.Add("", "\xff\xfe bad", "日本", uint8(255), uint16(50))
	f.Fuzz(func(t *testing.T, g, r, l string, rep uint8, b uint16) {
		if strings.Contains(g+r+l, "[adkctx") {
			return // the marker check below needs marker-free inputs
		}
		n := 1 + int(rep)
		g, r, l = strings.Repeat(g, n), strings.Repeat(r, n), strings.Repeat(l, n)
		budget := minMaxBytes + int(b)%4096
		var files []discover.File
		if g != "" {
			files = append(files, global(g))
		}
		files = append(files, file("AGENTS.md", r), file("a/b/AGENTS.md", l))
		m := merge(disc(files...), Config{MaxBytes: budget})
		if len(m.Text) > budget {
			t.Fatalf("len %d > budget %d", len(m.Text), budget)
		}
		if !utf8.ValidString(m.Text) {
			t.Fatal("invalid UTF-8")
		}
		if got := strings.Contains(m.Text, markerPrefix); got != m.Truncated {
			t.Fatalf("marker present %v, Truncated %v", got, m.Truncated)
		}
		anyCut := false
		for _, s := range m.Sources {
			anyCut = anyCut || s.Truncated
		}
		if anyCut != m.Truncated {
			t.Fatalf("sources cut %v, Truncated %v", anyCut, m.Truncated)
		}
		leaf := m.Sources[len(m.Sources)-1]
		if leaf.Truncated {
			for _, s := range m.Sources[:len(m.Sources)-1] {
				if !s.Omitted {
					t.Fatalf("leaf cut while %s kept %d bytes", s.Path, s.KeptBytes)
				}
			}
		}
	})
}
