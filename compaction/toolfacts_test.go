package compaction

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"
)

func named(p string, lines ...int) fileOp { return fileOp{Path: p, Op: opName, Lines: lines} }

// What a shell command's output names: file:line locations (grep hits, tracebacks, compiler
// errors, test failures), paths, failing tests of the usual runners, and the exit status the
// tool reports, in its fields or in the text.
func TestShellOutput(t *testing.T) {
	rc := func(n int) *int { return &n }
	cases := []struct {
		name    string
		command string
		resp    map[string]any
		files   []fileOp // after the script's own ops
		failing []string
		exit    *int
	}{
		{
			name:    "grep -rn hits",
			command: "grep -rn 'def resolve' src/",
			resp:    map[string]any{"output": "<returncode>0</returncode>\n<output>\nsrc/app/lookups.py:30:def resolve(field, name):\nsrc/app/fields.py:77:        return resolve(self, name)\n</output>"},
			files:   []fileOp{named("src/app/lookups.py", 30), named("src/app/fields.py", 77)},
			exit:    rc(0),
		},
		{
			name:    "one file, line-numbered: the lines are that file's",
			command: "grep -n '^import' pkg/where.py",
			resp:    map[string]any{"output": "<returncode>0</returncode>\n<output>\n1:import itertools\n3:import os\n</output>"},
			files:   []fileOp{named("pkg/where.py", 1, 3)},
			exit:    rc(0),
		},
		{
			name:    "python traceback under the script's directory",
			command: "cd /testbed && python reproduce.py",
			resp: map[string]any{"output": "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File \"/testbed/reproduce.py\", line 6, in <module>\n" +
				"  File \"/usr/lib/python3.11/json/decoder.py\", line 337, in decode\nTypeError: bad\n</output>"},
			files: []fileOp{named("reproduce.py", 6), named("/usr/lib/python3.11/json/decoder.py", 337)},
			exit:  rc(1),
		},
		{
			name:    "go test: the failing test and its location (a package path is a path)",
			command: "go test ./parser/",
			resp:    map[string]any{"stdout": "--- FAIL: TestParse/empty (0.00s)\n    parse_test.go:42: got 1, want 2\nFAIL\nFAIL\tgithub.com/acme/parser\t0.011s\n", "exit_code": 1.0},
			files:   []fileOp{named("parse_test.go", 42), named("github.com/acme/parser")},
			failing: []string{"TestParse/empty"},
			exit:    rc(1),
		},
		{
			name:    "go build errors",
			command: "go build ./...",
			resp:    map[string]any{"output": "# github.com/acme/x\n./main.go:12:3: undefined: foo\n./util/str.go:7:10: cannot use x (variable of type int) as string value\n", "returncode": 2},
			files:   []fileOp{named("github.com/acme/x"), named("main.go", 12), named("util/str.go", 7)},
			exit:    rc(2),
		},
		{
			name:    "pytest summary and unittest",
			command: "python -m pytest tests -q",
			resp: map[string]any{"output": "FAILED tests/test_query.py::test_exclude_none - AssertionError: assert [] == [1]\nERROR tests/test_db.py::test_conn - OSError\n" +
				"FAIL: test_split (tests.test_str.StrTest.test_split)\ntest_join (tests.test_str.StrTest.test_join) ... FAIL\n2 failed, 10 passed\nExit code: 1"},
			files:   []fileOp{named("tests/test_query.py"), named("tests/test_db.py")},
			failing: []string{"tests/test_query.py::test_exclude_none", "tests/test_db.py::test_conn", "test_split (tests.test_str.StrTest.test_split)", "test_join (tests.test_str.StrTest.test_join)"},
			exit:    rc(1),
		},
		{
			name:    "jest and cargo",
			command: "npm test && cargo test",
			resp:    map[string]any{"output": "FAIL src/components/App.test.js\n  ● renders\ntest parser::tests::it_parses ... FAILED\n  --> src/parser.rs:88:5\n[Command finished with exit code 101]"},
			files:   []fileOp{named("src/components/App.test.js"), named("src/parser.rs", 88)},
			failing: []string{"src/components/App.test.js", "parser::tests::it_parses"},
			exit:    rc(101),
		},
		{
			name:    "a listing: paths alone on their lines and slashed paths; not URLs, dates, versions or progress dots",
			command: "find . -name '*.py' | head",
			resp: map[string]any{"output": "./setup.py\n./pkg/__init__.py\nsee https://example.com/docs/a.html for more\nreleased 2024/05/20, version 1.2.3\n..........F\nmain.go\n" +
				"diff --git a/pkg/core.py b/pkg/core.py\n+++ b/pkg/core.py\nand/or\n"},
			files: []fileOp{named("setup.py"), named("pkg/__init__.py"), named("main.go"), named("pkg/core.py")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := stepOf(&genai.FunctionCall{Name: "bash", Args: map[string]any{"command": tc.command}}, "bash")
			if p.script == nil {
				t.Fatalf("%q is not read as a script", tc.command)
			}
			own := len(p.step.Files)
			p.addResult(tc.resp)
			if diff := cmp.Diff(tc.files, p.step.Files[own:], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("named (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.failing, p.step.Failing, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("failing (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.exit, p.step.Exit); diff != "" {
				t.Errorf("exit (-want +got):\n%s", diff)
			}
			if p.step.Values != nil {
				t.Errorf("a shell output gave values: %v", p.step.Values)
			}
		})
	}
}

// A structured tool's result gives the identifier-like values in it, with their key paths:
// ids, codes, dates, emails, numbers of 4 digits or more, keys of id-keyed maps; JSON held in
// a string is read as JSON. Prose, small numbers, booleans and the call's own values are not.
func TestResultValues(t *testing.T) {
	cases := []struct {
		name string
		args map[string]any
		resp map[string]any
		call string
		want []returnedValue
	}{
		{
			name: "a user record returned as JSON text",
			args: map[string]any{"user_id": "mia_li_3668"},
			resp: map[string]any{"result": `{"user_id": "mia_li_3668", "name": {"first_name": "Mia"}, "address": {"address1": "975 Sunset Drive", "zip": "78750", "state": "TX", "country": "USA"},
				"email": "mia.li@example.com", "dob": "1990-04-05", "membership": "gold", "verified": true, "points": 350,
				"payment_methods": {"credit_card_4421486": {"brand": "visa", "last_four": "7447", "id": "credit_card_4421486"}, "gift_card_88": {"balance": 20}},
				"reservations": ["NO6JO3", "AIXC49"]}`},
			call: "get_user_details(user_id=mia_li_3668)",
			want: []returnedValue{
				{"address.country", "USA"}, {"address.zip", "78750"}, {"dob", "1990-04-05"}, {"email", "mia.li@example.com"},
				{"payment_methods", "credit_card_4421486"}, {"payment_methods.credit_card_4421486.last_four", "7447"},
				{"payment_methods", "gift_card_88"}, {"reservations[0]", "NO6JO3"}, {"reservations[1]", "AIXC49"},
			},
		},
		{
			name: "an object result with Go numbers; a list of flights",
			args: map[string]any{"origin": "JFK", "destination": "SEA", "date": "2024-05-20"},
			resp: map[string]any{"count": 2, "flights": []any{
				map[string]any{"flight_number": "HAT069", "departure": "2024-05-20T06:00:00Z", "price": 182, "seats": int64(12)},
				map[string]any{"flight_number": "HAT083", "departure": "2024-05-20T09:00:00Z", "price": 1286.5, "code": "ECONOMY"},
			}},
			call: "search(date=2024-05-20, destination=SEA, origin=JFK)",
			want: []returnedValue{
				{"flights[0].departure", "2024-05-20T06:00:00Z"}, {"flights[0].flight_number", "HAT069"},
				{"flights[1].code", "ECONOMY"}, {"flights[1].departure", "2024-05-20T09:00:00Z"}, {"flights[1].flight_number", "HAT083"}, {"flights[1].price", "1286.5"},
			},
		},
		{
			name: "a path argument stays in the paths; text results give no values",
			args: map[string]any{"path": "src/main.go"},
			resp: map[string]any{"content": "package main\n\nfunc main() {}\n"},
		},
		{
			name: "an editor tool's command word is not a script",
			args: map[string]any{"command": "view", "path": "src/app.py", "view_range": []any{1.0, 40.0}},
			resp: map[string]any{"output": "     1\timport os\n     2\tfrom app import db:12\n"},
		},
		{
			name: "an error result",
			args: map[string]any{"reservation_id": "ZZZ999"},
			resp: map[string]any{"error": "Error: reservation ZZZ999 not found"},
			call: "cancel(reservation_id=ZZZ999)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "tool"
			if tc.call != "" {
				name = tc.call[:len(tc.call)-len(tc.call[indexByte(tc.call, '('):])]
			}
			p := stepOf(&genai.FunctionCall{Name: name, Args: tc.args}, name)
			if p.script != nil {
				t.Fatalf("read as a shell script: %+v", p.script)
			}
			p.addResult(tc.resp)
			if p.step.Call != tc.call {
				t.Errorf("call = %q, want %q", p.step.Call, tc.call)
			}
			if diff := cmp.Diff(tc.want, p.step.Values, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

func TestIDLike(t *testing.T) {
	for s, want := range map[string]bool{
		"credit_card_4421486": true, "HAT136": true, "8ZX5QL": true, "78750": true, "2024-05-20": true,
		"2024-05-20T06:00:00Z": true, "2024-05-20 06:00": true, "06:00:00": true, "mia.li@example.com": true,
		"JFK": true, "USD": true, "ord-2024-001": true, "550e8400-e29b-41d4-a716-446655440000": true,
		"gold": false, "economy": false, "one_way": false, "Mia": false, "TX": false, "975 Sunset Drive": false,
		"v1.2": true, "a1": false, "hello world 1234": false, "": false,
	} {
		if got := idLike(s); got != want {
			t.Errorf("idLike(%q) = %v, want %v", s, got, want)
		}
	}
}

// The ledger's exit status and its error line read the same fields; an HTTP status is neither.
func TestExitFields(t *testing.T) {
	for _, key := range exitKeys {
		resp := map[string]any{key: 2.0, "stderr": "boom"}
		if got := exitStatus(resp, nil); got == nil || *got != 2 {
			t.Errorf("exitStatus(%v) = %v, want 2", resp, got)
		}
		if got := responseError(resp); got == "" {
			t.Errorf("responseError(%v) is empty, want the failure", resp)
		}
	}
	http := map[string]any{"status_code": 200.0, "body": "ok"}
	if got := exitStatus(http, nil); got != nil {
		t.Errorf("exitStatus(%v) = %d, want none", http, *got)
	}
	if got := responseError(http); got != "" {
		t.Errorf("responseError(%v) = %q, want none", http, got)
	}
}

// panicky is a tool's own value whose JSON encoding panics.
type panicky struct{ ID string }

func (panicky) MarshalJSON() ([]byte, error) { panic("broken encoder") }

// A value whose encoder panics is left out of the record; the values beside it are kept.
func TestResultValuePanics(t *testing.T) {
	b, ok := marshalValue(panicky{ID: "ord_12345"})
	if ok || b != nil {
		t.Fatalf("marshalValue = %q, %v: want nothing", b, ok)
	}
	if b, ok := marshalValue(map[string]any{"id": "ord_12345"}); !ok || string(b) != `{"id":"ord_12345"}` {
		t.Fatalf("marshalValue = %q, %v", b, ok)
	}
}

// A shell tool's call carries options beside its command: a description, a time limit, a
// working directory, flags of the harness (Claude Code's Bash, OpenHands' execute_bash, Codex's
// shell and exec_command). Its command is the script whatever program it runs, its exit status
// and output are read, and the options are not a call line. A command beside arguments that are
// not options of a run (a note, a path, a query) is read only when the vocabulary knows it.
func TestShellToolWithOptions(t *testing.T) {
	rc := func(n int) *int { return &n }
	cases := []struct {
		name    string
		args    map[string]any
		resp    map[string]any
		command string   // "" for none
		exit    *int     // read from the result
		files   []fileOp // the script's and its output's
		call    string
	}{
		{
			name:    "Claude Code Bash: an unknown program, a description and a timeout",
			args:    map[string]any{"command": "just check 2>&1", "description": "Run checks", "timeout": 120000.0},
			resp:    map[string]any{"result": "error: Recipe `check` failed on line 3\nsrc/lib.rs:12:5: unused import\nExit code 1"},
			command: "just check 2>&1", exit: rc(1), files: []fileOp{named("src/lib.rs", 12)},
		},
		{
			name:    "Claude Code Bash in the background, sandbox off",
			args:    map[string]any{"command": "just lint", "description": "Lint", "run_in_background": false, "dangerouslyDisableSandbox": true},
			resp:    map[string]any{"result": "All checks passed!\nExit code 0"},
			command: "just lint", exit: rc(0),
		},
		{
			name:    "OpenHands execute_bash: a one-line output is read",
			args:    map[string]any{"command": "ruff check .", "is_input": "false", "timeout": 30.0, "security_risk": "LOW"},
			resp:    map[string]any{"content": "src/b.py:3:1", "exit_code": 1.0},
			command: "ruff check .", exit: rc(1), files: []fileOp{named("src/b.py", 3)},
		},
		{
			name:    "OpenHands execute_bash: a path of its output alone",
			args:    map[string]any{"command": "mypy src/", "is_input": false},
			resp:    map[string]any{"content": "pkg/v2/models.py", "exit_code": 0.0},
			command: "mypy src/", exit: rc(0), files: []fileOp{fop("src", opUse), named("pkg/v2/models.py")},
		},
		{
			name:    "Codex exec_command",
			args:    map[string]any{"cmd": "just test", "workdir": "/repo", "yield_time_ms": 10000.0, "max_output_tokens": 6000.0},
			resp:    map[string]any{"output": "Process exited with code 0\nok"},
			command: "just test", exit: rc(0),
		},
		{
			name:    "Codex shell: an argv list with a working directory",
			args:    map[string]any{"command": []any{"bash", "-lc", "make test"}, "workdir": "/repo", "timeout_ms": 60000.0},
			resp:    map[string]any{"output": "ok", "exit_code": 0.0},
			command: "bash -lc 'make test'", exit: rc(0),
		},
		{
			name:    "a bare word with a time limit",
			args:    map[string]any{"command": "pytest", "timeout": 300.0},
			resp:    map[string]any{"output": "FAILED tests/test_a.py::test_x - assert 1 == 2", "returncode": 1.0},
			command: "pytest", exit: rc(1), files: []fileOp{named("tests/test_a.py")},
		},
		// Not scripts.
		{
			name: "a search tool's prose query with a time limit",
			args: map[string]any{"query": "find flights from SFO to JFK", "timeout": 30.0},
			resp: map[string]any{"result": "no flights"},
		},
		{
			name: "a search tool's query naming a program",
			args: map[string]any{"query": "ruff check configuration", "max_results": 10.0},
			resp: map[string]any{"result": "docs/lint.md"},
		},
		{
			name: "prose under a command key beside a description",
			args: map[string]any{"command": "please review the changes", "description": "ask the reviewer"},
			resp: map[string]any{"result": "done"},
		},
		{
			name: "an unknown program beside an argument that is not an option of a run",
			args: map[string]any{"command": "mypy src/", "note": "typecheck", "ticket": "OPS-1234"},
			resp: map[string]any{"result": "ok"},
			call: "tool(ticket=OPS-1234)",
		},
		{
			name: "an editor's sub-command with a path",
			args: map[string]any{"command": "view", "path": "src/app.py", "timeout": 30.0},
			resp: map[string]any{"output": "     1\timport os\n"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := stepOf(&genai.FunctionCall{Name: "tool", Args: tc.args}, "tool")
			p.addResult(tc.resp)
			s := p.step
			if s.Command != tc.command {
				t.Fatalf("command = %q, want %q (call %q)", s.Command, tc.command, s.Call)
			}
			if s.Call != tc.call {
				t.Errorf("call = %q, want %q", s.Call, tc.call)
			}
			if tc.command == "" {
				return
			}
			if diff := cmp.Diff(tc.exit, s.Exit); diff != "" {
				t.Errorf("exit (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.files, s.Files, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if !s.Run {
				t.Errorf("%q is not recorded as run", s.Command)
			}
		})
	}
}

// File contents a tool writes (a new file's text, an edit's old and new text, a patch) are
// never read as a script, however much they look like one; the call records a write of its
// path (of each file a patch changes). An editor's sub-command ("create", "str_replace") is
// not a script either.
func TestContentArgs(t *testing.T) {
	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		files []fileOp
	}{
		{
			name:  "Claude Code Write of a Justfile",
			tool:  "Write",
			args:  map[string]any{"file_path": "/repo/Justfile", "content": "# Run all checks\ncheck:\n  cargo llvm-cov --workspace --fail-under-lines 90\n  cargo clippy -- -D warnings\n"},
			files: []fileOp{fop("/repo/Justfile", opWrite)},
		},
		{
			name:  "Claude Code Edit",
			tool:  "Edit",
			args:  map[string]any{"file_path": "Makefile", "old_string": "test:\n\tgo test ./...", "new_string": "test:\n\tgo test -race ./...", "replace_all": false},
			files: []fileOp{fop("Makefile", opWrite)},
		},
		{
			name: "Claude Code MultiEdit",
			tool: "MultiEdit",
			args: map[string]any{"file_path": "scripts/ci.sh", "edits": []any{
				map[string]any{"old_string": "set -e", "new_string": "set -euo pipefail"},
				map[string]any{"old_string": "make test", "new_string": "make test 2>&1 | tee test.log"},
			}},
			files: []fileOp{fop("scripts/ci.sh", opWrite)},
		},
		{
			name:  "OpenHands str_replace_editor create: a sub-command and a script's text",
			tool:  "str_replace_editor",
			args:  map[string]any{"command": "create", "path": "/repo/run.sh", "file_text": "#!/bin/bash\npython -m pytest tests/ -x"},
			files: []fileOp{fop("/repo/run.sh", opWrite)},
		},
		{
			name:  "OpenHands str_replace_editor str_replace",
			tool:  "str_replace_editor",
			args:  map[string]any{"command": "str_replace", "path": "/repo/tox.ini", "old_str": "commands = pytest", "new_str": "commands = pytest -x --tb=short"},
			files: []fileOp{fop("/repo/tox.ini", opWrite)},
		},
		{
			name:  "str_replace_editor insert",
			tool:  "str_replace_editor",
			args:  map[string]any{"command": "insert", "path": "setup.sh", "insert_line": 3.0, "new_str": "pip install -e .\n"},
			files: []fileOp{fop("setup.sh", opWrite)},
		},
		{
			name:  "a write_file tool",
			tool:  "write_file",
			args:  map[string]any{"filename": "notes/todo.md", "contents": "cat the logs | grep ERROR\n"},
			files: []fileOp{fop("notes/todo.md", opWrite)},
		},
		{
			name: "a text beside a path: not a script, and no write (a text to find or to write)",
			tool: "find_in_file",
			args: map[string]any{"path": "src/a.py", "text": "make test && ls"},
		},
		{
			name:  "a patch tool: the files the diff changes",
			tool:  "apply_patch",
			args:  map[string]any{"patch": "--- a/src/x.go\n+++ b/src/x.go\n@@ -1 +1 @@\n-go test ./...\n+go vet ./...\n"},
			files: []fileOp{fop("src/x.go", opWrite)},
		},
		{
			name: "an editor's view: no content, no write",
			tool: "str_replace_editor",
			args: map[string]any{"command": "view", "path": "/repo/run.sh"},
		},
		{
			name: "a message's text is not a script, nor a write",
			tool: "send_message",
			args: map[string]any{"text": "cat README.md && make test"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := stepOf(&genai.FunctionCall{Name: tc.tool, Args: tc.args}, tc.tool)
			p.addResult(map[string]any{"result": "ok"})
			if p.script != nil || p.step.Command != "" || p.step.Run {
				t.Fatalf("read as a script: %q (run %v)", p.step.Command, p.step.Run)
			}
			if diff := cmp.Diff(tc.files, p.step.Files, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}
