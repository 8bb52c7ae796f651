package compaction

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func read(p string, from, to int) fileOp {
	return fileOp{Path: p, Op: opRead, Range: lineRange{from, to}}
}
func fop(p, op string) fileOp { return fileOp{Path: p, Op: op} }

// A shell command is read by its syntax tree: the files it reads (with the line range shown),
// searches, writes, creates and removes, whatever the way it is written (pipes, heredocs,
// redirections, nested shells, wrappers), and whether it runs anything beyond that.
func TestReadShell(t *testing.T) {
	cases := []struct {
		script string
		ops    []fileOp
		runs   bool
		line   string // "" : the script itself
		grep   string
	}{
		// Views with ranges, as shell agents write them.
		{script: "cd /testbed && nl -ba django/db/models/query.py | sed -n '1400,1440p'", ops: []fileOp{read("django/db/models/query.py", 1400, 1440)}},
		{script: "sed -n '10,20p;30,40p' pkg/a.py", ops: []fileOp{read("pkg/a.py", 10, 40)}},
		{script: "sed -n 5p a.py", ops: []fileOp{read("a.py", 5, 5)}},
		{script: "sed -n '100,$p' a.py", ops: []fileOp{read("a.py", 100, wholeFile)}},
		{script: "sed -n '/^func /,/^}/p' main.go", ops: []fileOp{read("main.go", 0, 0)}},
		{script: "head -n 50 src/x.go", ops: []fileOp{read("src/x.go", 1, 50)}},
		{script: "head -20 src/x.go src/y.go", ops: []fileOp{read("src/x.go", 1, 20), read("src/y.go", 1, 20)}},
		{script: "tail -n 30 x.log", ops: []fileOp{read("x.log", -30, 0)}},
		{script: "tail -n +40 x.go", ops: []fileOp{read("x.go", 40, wholeFile)}},
		{script: "cat -n a.py | head -30", ops: []fileOp{read("a.py", 1, 30)}},
		{script: "nl -ba a.py | sed -n '10,50p' | head -5", ops: []fileOp{read("a.py", 10, 14)}},
		{script: "cat a.py | tail -n 5", ops: []fileOp{read("a.py", -5, 0)}},
		{script: "cat README", ops: []fileOp{read("README", 1, wholeFile)}},
		{script: "less +G 'docs/my notes.md'", ops: []fileOp{read("docs/my notes.md", 1, wholeFile)}},
		{script: "bat -r 20:40 lib/x.rs", ops: []fileOp{read("lib/x.rs", 20, 40)}},
		{script: "cat /testbed/setup.cfg", ops: []fileOp{read("/testbed/setup.cfg", 1, wholeFile)}},
		{script: "cd /testbed && cat /testbed/setup.cfg ./tox.ini", ops: []fileOp{read("setup.cfg", 1, wholeFile), read("tox.ini", 1, wholeFile)}},
		// Searches.
		{script: "grep -n 'def foo' pkg/mod.py", ops: []fileOp{fop("pkg/mod.py", opSearch)}, grep: "pkg/mod.py"},
		{script: "grep -rn \"class Foo\" src/ | head -20", ops: []fileOp{fop("src", opSearch)}},
		{script: "grep -e x -e y a.go b.go", ops: []fileOp{fop("a.go", opSearch), fop("b.go", opSearch)}},
		{script: "rg -n --type py 'import os' lib", ops: []fileOp{fop("lib", opSearch)}, grep: "lib"},
		// Writes, creations, removals.
		{script: "cat <<'EOF' > new.py\nimport os\nprint(os.getcwd())\nEOF", ops: []fileOp{fop("new.py", opWrite)}, line: "cat <<'EOF' > new.py …"},
		{script: "echo 'x = 1' >> config/local.py", ops: []fileOp{fop("config/local.py", opWrite)}},
		{script: "python script.py > out.txt 2>&1", ops: []fileOp{fop("script.py", opUse), fop("out.txt", opWrite)}, runs: true},
		{script: "python - <<'PY'\nprint(1)\nPY\n", runs: true, line: "python - <<'PY' …"},
		{script: "printf 'a\\nb\\n' | tee -a notes.md >/dev/null", ops: []fileOp{fop("notes.md", opWrite)}},
		{script: "sed -i 's/a/b/' x.py y.py", ops: []fileOp{fop("x.py", opWrite), fop("y.py", opWrite)}},
		{script: "sed -i.bak -e 's/a/b/' x.py", ops: []fileOp{fop("x.py", opWrite)}},
		{script: "patch -p1 < fix.diff", ops: []fileOp{fop("fix.diff", opUse)}},
		{script: "git apply <<'EOF'\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\nEOF", ops: []fileOp{fop("x.go", opWrite)}, runs: true, line: "git apply <<'EOF' …"},
		{script: "patch -p0 <<'EOF'\n--- old/lib.c\n+++ lib.c\nEOF", ops: []fileOp{fop("lib.c", opWrite)}, line: "patch -p0 <<'EOF' …"},
		{script: "cp a.py /tmp/b.py", ops: []fileOp{fop("a.py", opUse), fop("/tmp/b.py", opWrite)}},
		{script: "mv old.py new.py", ops: []fileOp{fop("old.py", opRemove), fop("new.py", opWrite)}},
		{script: "touch a.txt && mkdir -p d/e", ops: []fileOp{fop("a.txt", opCreate), fop("d/e", opCreate)}},
		{script: "rm -rf build/ tmp.py", ops: []fileOp{fop("build", opRemove), fop("tmp.py", opRemove)}},
		{script: "git rm -q old.go && git checkout -- main.go", ops: []fileOp{fop("old.go", opRemove), fop("main.go", opWrite)}, runs: true},
		// Runs; wrappers and nested shells.
		{script: "timeout 60 python -m pytest tests/test_x.py::test_y -q", ops: []fileOp{fop("tests/test_x.py", opUse)}, runs: true},
		{script: "go test ./pkg/... -run TestX", ops: []fileOp{fop("pkg", opUse)}, runs: true},
		{script: "bash -lc 'cat a.py'", ops: []fileOp{read("a.py", 1, wholeFile)}},
		{script: "sudo -u app env DEBUG=1 python manage.py check", ops: []fileOp{fop("manage.py", opUse)}, runs: true},
		{script: "for f in a.py b.py; do python -m py_compile $f; done", runs: true},
		{script: "cat $(git ls-files '*.go' | head -1)", runs: true},
		{script: "ls -la django/db/", ops: []fileOp{fop("django/db", opUse)}},
		{script: "[ -f setup.py ] && echo yes", ops: []fileOp{fop("setup.py", opUse)}},
	}
	for _, tc := range cases {
		t.Run(tc.script, func(t *testing.T) {
			sc, ok := readShell(tc.script, onlyArg)
			if !ok {
				t.Fatalf("readShell(%q) not read as a script", tc.script)
			}
			if diff := cmp.Diff(tc.ops, sc.ops, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ops (-want +got):\n%s", diff)
			}
			if sc.runs != tc.runs {
				t.Errorf("runs = %v, want %v", sc.runs, tc.runs)
			}
			line := tc.line
			if line == "" {
				line = oneLine(tc.script)
			}
			if sc.line != line {
				t.Errorf("line = %q, want %q", sc.line, line)
			}
			if sc.grepFile != tc.grep {
				t.Errorf("grepFile = %q, want %q", sc.grepFile, tc.grep)
			}
		})
	}
}

// Prose and values that a service tool passes are not scripts, though many parse as one.
func TestReadShellProse(t *testing.T) {
	for _, s := range []string{
		"find flights from SFO to JFK",
		"Please cancel my booking; thanks",
		"change of plans; the user asked for a refund",
		"Hello, I'd like to book a flight.",
		"hello world",
		"JFK", "2024-05-20", "mia_li_3668", "/api/v1/users", "credit_card_4421486",
		"The certificate covers the whole economy fare; the Visa card pays nothing.",
		"182 - 250",
		"",
		"   ",
	} {
		for _, at := range []scriptPlace{besideArgs, onlyArg} {
			if sc, ok := readShell(s, at); ok {
				t.Errorf("readShell(%q, place %d) read as a script: %+v", s, at, sc)
			}
		}
	}
	// A shell tool's command runs any program, yet a sentence there is still prose.
	for _, s := range []string{
		"please review the changes and tell me",
		"find flights from SFO to JFK",
		"Please cancel my booking; thanks",
		"The certificate covers the whole economy fare; the Visa card pays nothing.",
		"JFK", "2024-05-20", "182 - 250", "",
	} {
		if sc, ok := readShell(s, shellCommand); ok {
			t.Errorf("readShell(%q, shellCommand) read as a script: %+v", s, sc)
		}
	}
}

// A call's argument holding a script is found by content, whatever its key, as a string or an
// argv list; one word is a script only as the call's only argument.
func TestShellArg(t *testing.T) {
	cases := []struct {
		args map[string]any
		want string // the command line; "" for none
	}{
		{map[string]any{"command": "ls"}, "ls"},
		{map[string]any{"cmd": "cat a.py", "timeout": 30.0}, "cat a.py"},
		{map[string]any{"input": "grep -rn TODO src/"}, "grep -rn TODO src/"},
		{map[string]any{"command": []any{"bash", "-lc", "cd /repo && cat go.mod"}}, "bash -lc 'cd /repo && cat go.mod'"},
		{map[string]any{"command": "view", "path": "src/app.py"}, ""},
		{map[string]any{"cwd": "/testbed", "reason": "user asked"}, ""},
		{map[string]any{"user_id": "mia_li_3668", "note": "find flights from SFO to JFK"}, ""},
		// A shell tool's only argument runs any program, not only the ones the vocabulary names.
		{map[string]any{"command": "mypy src/"}, "mypy src/"},
		{map[string]any{"command": "ruff check ."}, "ruff check ."},
		{map[string]any{"cmd": "terraform plan -out plan.bin"}, "terraform plan -out plan.bin"},
		{map[string]any{"command": "./gradlew test"}, "./gradlew test"},
		{map[string]any{"command": "./run.sh"}, "./run.sh"},
		{map[string]any{"script": "jq .id out.json"}, "jq .id out.json"},
		{map[string]any{"command": "rspec spec/a_spec.rb"}, "rspec spec/a_spec.rb"},
		// Beside other arguments, an unknown program is not enough.
		{map[string]any{"command": "mypy src/", "note": "x"}, ""},
		{map[string]any{"endpoint": "/api/v1/users"}, ""},
	}
	for _, tc := range cases {
		got := ""
		if sc := shellArg(tc.args); sc != nil {
			got = sc.line
		}
		if got != tc.want {
			t.Errorf("shellArg(%v) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
