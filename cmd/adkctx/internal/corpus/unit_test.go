package corpus

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestRenderObservation(t *testing.T) {
	long := strings.Repeat("a", 6000) + strings.Repeat("é", 6000) // 12,000 characters, more bytes
	for _, tc := range []struct {
		name, output string
		code         int
		want         string
	}{
		{name: "empty", output: "", code: 1, want: "<returncode>1</returncode>\n<output>\n</output>"},
		{name: "lines", output: "a.go:3:x\n", want: "<returncode>0</returncode>\n<output>\na.go:3:x\n</output>"},
		{name: "no final newline", output: "x", want: "<returncode>0</returncode>\n<output>\nx</output>"},
		{name: "just short", output: strings.Repeat("é", maxObservation-1), want: "<returncode>0</returncode>\n<output>\n" + strings.Repeat("é", maxObservation-1) + "</output>"},
		{name: "long", output: long, code: 2, want: "<returncode>2</returncode>\n<warning>\n" + longOutputWarning +
			"</warning><output_head>\n" + strings.Repeat("a", 5000) + "\n</output_head>\n<elided_chars>\n2000 characters elided\n</elided_chars>\n<output_tail>\n" +
			strings.Repeat("é", 5000) + "\n</output_tail>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, renderObservation(tc.output, tc.code)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzRenderObservation(f *testing.F) {
	f.Add("hello\n", 0)
	f.Add(strings.Repeat("x\n", 6000), 1)
	f.Add(strings.Repeat("日本", 5100), 2)
	f.Fuzz(func(t *testing.T, out string, code int) {
		out = strings.ToValidUTF8(out, "\uFFFD") // what the sandbox records
		got := renderObservation(out, code)
		if !utf8.ValidString(got) {
			t.Fatal("invalid UTF-8")
		}
		n := utf8.RuneCountInString(out)
		if n < maxObservation {
			if !strings.Contains(got, out) {
				t.Fatal("a short output is not shown whole")
			}
			return
		}
		r := []rune(out)
		if !strings.Contains(got, "<output_head>\n"+string(r[:observationHalf])+"\n</output_head>") ||
			!strings.Contains(got, "<output_tail>\n"+string(r[n-observationHalf:])+"\n</output_tail>") {
			t.Fatal("head or tail not shown")
		}
		if utf8.RuneCountInString(got) > 2*observationHalf+1000 {
			t.Fatalf("a long output shows %d characters", utf8.RuneCountInString(got))
		}
	})
}

func TestFirstOfTwo(t *testing.T) {
	run := "--- FAIL: TestA (0.00s)\n    a_test.go:3: no\n"
	tail := "FAIL\nFAIL\tpkg\t0.100s\nFAIL\n"
	for _, tc := range []struct {
		name, out, want string
		ok              bool
	}{
		{"repeated", run + run + tail, run + tail, true},
		{"differs", run + strings.Replace(run, "no", "yes", 1) + tail, "", false},
		{"once", run + tail, "", false},
		{"empty", tail, "", false},
	} {
		got, ok := firstOfTwo(tc.out)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: firstOfTwo = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCompareSemver(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"v1.10.0", "v1.9.1", 1},
		{"v0.7.0", "v0.7.0", 0},
		{"v1.0.0-rc.1", "v1.0.0", -1},
		{"v1.0.1-0.20181226105442-5d4384ee4fb2", "v1.0.0", 1},
		{"v2.3.0+incompatible", "v2.3.0", 0},
	} {
		if got := compareSemver(tc.a, tc.b); got != tc.want {
			t.Errorf("compareSemver(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if got := escapeModulePath("github.com/GoogleCloudPlatform/x"); got != "github.com/!google!cloud!platform/x" {
		t.Errorf("escapeModulePath = %s", got)
	}
	if !hasRequirements("module m\n\nrequire (\n\tx v1\n)\n") || hasRequirements("module m\n\ngo 1.21\n// require nothing\n") {
		t.Error("hasRequirements")
	}
}

// TestSedFix runs the sed commands the agent writes, on lines holding what sed treats as special.
func TestSedFix(t *testing.T) {
	for _, tc := range []struct{ orig, bug, expr, bugExpr string }{
		{"\tif i < len(s) {", "\tif i <= len(s) {", "i < len(s)", "i <= len(s)"},
		{"\tif a.b[0] == '/' && x {", "\tif a.b[0] != '/' && x {", "a.b[0] == '/'", "a.b[0] != '/'"},
		{"\treturn x&1 == 0 || y.*z == $", "\treturn x&1 != 0 || y.*z == $", "x&1 == 0", "x&1 != 0"},
		{"\tok := p >= q && p >= q", "\tok := p > q && p >= q", "p >= q", "p > q"}, // the expression twice on the line
		{`	s := "\\" + x; if n < 3 {`, `	s := "\\" + x; if n <= 3 {`, "", ""},
	} {
		runSedFix(t, mutation{line: 2, origLine: tc.orig, bugLine: tc.bug, expr: tc.expr, bugExpr: tc.bugExpr})
	}
}

func runSedFix(t *testing.T, m mutation) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "f.go")
	content := "package p\n" + m.bugLine + "\n}\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := &sandbox{root: dir, env: []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}, timeout: 10 * time.Second}
	out, code, err := sb.exec(context.Background(), sedFix(m, "f.go"))
	if err != nil || code != 0 {
		t.Fatalf("%s: exit %d, %v: %s", sedFix(m, "f.go"), code, err, out)
	}
	got, _ := os.ReadFile(file)
	if want := "package p\n" + m.origLine + "\n}\n"; string(got) != want {
		t.Errorf("%s turned %q into %q, want %q", sedFix(m, "f.go"), content, got, want)
	}
}

func FuzzSedFix(f *testing.F) {
	f.Add("if a < b {", "a < b")
	f.Add(`x := "/.*[]^$&\\" + y`, "")
	f.Fuzz(func(t *testing.T, line, expr string) {
		if strings.ContainsAny(line, "\n\r\x00") || !utf8.ValidString(line) || !strings.Contains(line, "<") {
			t.Skip()
		}
		i := strings.Index(line, "<")
		bug := line[:i] + "<=" + line[i+1:]
		m := mutation{line: 2, origLine: line, bugLine: bug}
		if expr != "" && strings.Contains(line, expr) && strings.Contains(expr, "<") {
			j := strings.Index(line, expr)
			if j <= i && i < j+len(expr) {
				m.expr = expr
				m.bugExpr = bug[j : j+len(expr)+1]
			}
		}
		runSedFix(t, m)
	})
}

func TestFixImports(t *testing.T) {
	src := "package p\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) { fmt.Println() }\n"
	out := "# p\n./repro_test.go:5:2: \"strings\" imported and not used\nFAIL\tp [build failed]\n"
	got, changed := fixImports(src, out)
	want := strings.Replace(src, "\t\"strings\"\n", "", 1)
	if !changed || got != want {
		t.Errorf("fixImports = %q, %v; want %q", got, changed, want)
	}
	if _, changed := fixImports(src, "ok\n"); changed {
		t.Error("fixImports changed a file that compiles")
	}
}

func TestNormalize(t *testing.T) {
	sb := &sandbox{root: "/tmp/x/testbed"}
	now := time.Now().UTC()
	in := "ok  \tgithub.com/a/b\t0.123s\n--- PASS: TestX/sub (1.25s)\n/tmp/x/testbed/a.go:3\n" +
		`{"time":"` + now.Format("2006-01-02 15:04:05.000000") + `"} T=` + now.Format(time.RFC3339) +
		" fixture 2009-11-10 23:00:00 cmp\u00a0diff\n"
	want := "ok  \tgithub.com/a/b\t" + fakeDuration("github.com/a/b") + "\n--- PASS: TestX/sub (0.00s)\n/testbed/a.go:3\n" +
		`{"time":"2025-03-03 09:41:00.000000"} T=2025-03-03T09:41:00Z fixture 2009-11-10 23:00:00 cmp diff` + "\n"
	if diff := cmp.Diff(want, sb.normalize(in)); diff != "" {
		t.Errorf("normalize (-want +got):\n%s", diff)
	}
}
