package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/session"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader on different goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// session drives the REPL through a pipe, as a person types.
type replSession struct {
	t      *testing.T
	pw     *io.PipeWriter
	out    syncBuffer
	errb   syncBuffer
	done   chan int
	cancel context.CancelFunc
}

// startREPL runs the program on a pipe for stdin.
func startREPL(t *testing.T, env func(string) string, args ...string) *replSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &replSession{t: t, pw: pw, done: make(chan int, 1), cancel: cancel}
	go func() { s.done <- run(ctx, args, pr, &s.out, &s.errb, env) }()
	t.Cleanup(func() {
		cancel()
		pw.Close()
	})
	return s
}

// say writes one line; it returns once the REPL has read it, that is once it has finished the
// line before the previous one (the reader reads one line ahead of the loop).
func (s *replSession) say(line string) {
	s.t.Helper()
	if _, err := s.pw.Write([]byte(line + "\n")); err != nil {
		s.t.Fatalf("write %q: %v", line, err)
	}
}

// settle returns once every line said so far has been handled.
func (s *replSession) settle() {
	s.say("/help")
	s.say("/help")
}

// exit waits for the program's exit code.
func (s *replSession) exit() int {
	s.t.Helper()
	select {
	case code := <-s.done:
		return code
	case <-time.After(2 * time.Minute):
		s.t.Fatal("the program did not stop")
		return -1
	}
}

// reopen reads a session's stored events from an SQLite file with a store of its own.
func reopen(t *testing.T, db, sessionID string) []*session.Event {
	t.Helper()
	st, err := openStore(context.Background(), db)
	if err != nil {
		t.Fatalf("reopen %s: %v", db, err)
	}
	defer st.Close()
	events, err := storedEvents(context.Background(), st, sessionID)
	if err != nil {
		t.Fatalf("session %s not in %s: %v", sessionID, db, err)
	}
	return events
}

// assertClosed checks that the SQLite file was closed cleanly: its write-ahead log merged into
// the file and removed.
func assertClosed(t *testing.T, db string) {
	t.Helper()
	for _, f := range []string{db + "-wal", db + "-shm"} {
		if st, err := os.Stat(f); err == nil {
			t.Errorf("%s left behind (%d bytes): the database was not closed", filepath.Base(f), st.Size())
		}
	}
}

// The SQLite database is closed on every way out: /quit, end of input, an error after it was
// opened, and Ctrl-C while the REPL waits for input. What the session stored is in the file.
func TestStoreClosedOnEveryExit(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	tests := []struct {
		name     string
		args     []string
		lines    []string
		end      func(s *replSession)
		wantCode int
		wantErr  string
		stored   bool
	}{
		{"quit", nil, []string{"List the files here", "/quit"}, func(*replSession) {}, 0, "", true},
		{"end of input", nil, []string{"List the files here"}, func(s *replSession) { s.pw.Close() }, 0, "", true},
		{"interrupt", nil, []string{"List the files here"}, func(s *replSession) { s.settle(); s.cancel() }, 130, "example: interrupted\n", true},
		{"error", []string{"web", "-bogus"}, nil, func(*replSession) {}, 1, "bogus", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "s.db")
			args := append([]string{"-db", db, "-log", filepath.Join(dir, "l.jsonl"), "-session", "s1"}, tc.args...)
			s := startREPL(t, noEnv, args...)
			for _, l := range tc.lines {
				s.say(l)
			}
			tc.end(s)
			if code := s.exit(); code != tc.wantCode || !strings.Contains(s.errb.String(), tc.wantErr) {
				t.Fatalf("exit code %d, stderr %q; want %d, %q", code, s.errb.String(), tc.wantCode, tc.wantErr)
			}
			assertClosed(t, db)
			if !tc.stored {
				return
			}
			events := reopen(t, db, "s1")
			if len(events) < 4 || events[0].Author != "user" { // the question, a call, its result, the answer
				t.Errorf("stored events after the exit: %d", len(events))
			}
		})
	}
}

// Files the user did not name (the extracted demo repository, the database, the log) are
// removed at exit; named ones are kept.
func TestTempFilesRemoved(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	kept := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		stdin string
		keep  []string
	}{
		{"repl", nil, "List the files here\n/compact\n/quit\n", nil},
		{"demo", []string{"-demo", "-turns", "2"}, "", nil},
		{"demo json", []string{"-demo", "-turns", "2", "-report", "json"}, "", nil},
		{"named files", []string{"-db", filepath.Join(kept, "s.db"), "-log", filepath.Join(kept, "l.jsonl")}, "List the files here\n", []string{"l.jsonl", "s.db"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, tc.stdin, noEnv, tc.args...)
			if code != 0 {
				t.Fatalf("exit code %d, stderr %s", code, stderr)
			}
			if tc.keep == nil && !strings.Contains(stdout, "removed at exit") && !strings.Contains(stdout, `"db_temporary": true`) {
				t.Errorf("the output does not say the files are temporary:\n%s", stdout)
			}
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			if len(names) != 0 {
				t.Errorf("left in the temp dir: %v", names)
			}
			if tc.keep != nil {
				entries, err := os.ReadDir(kept)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, e := range entries {
					got = append(got, e.Name())
				}
				if diff := cmp.Diff(tc.keep, got); diff != "" {
					t.Errorf("named files (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A line over 1 MiB is refused with one line of explanation; the session goes on.
func TestLongLineRefused(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	in := "Read `README.md`\n" + strings.Repeat("x", maxLine+1) + "\n" + "What are the rules for working in this directory?\n/quit\n"
	code, out, stderr := runMain(t, in, noEnv, "-db", filepath.Join(dir, "s.db"), "-log", filepath.Join(dir, "l.jsonl"))
	if code != 0 {
		t.Fatalf("exit code %d, stderr %s", code, stderr)
	}
	want := "line refused: 1,048,577 bytes is over the 1,048,576-byte limit of one message; nothing was sent\n"
	if strings.Count(out, "line refused") != 1 || !strings.Contains(out, want) {
		t.Errorf("output lacks %q once:\n%s", want, out)
	}
	i := strings.Index(out, want)
	if i < 0 || !strings.Contains(out[i:], "Billing rounds half-even") || !strings.Contains(out[i:], "bye") {
		t.Errorf("the session did not go on after the refused line:\n%s", out)
	}
}

func TestReadLine(t *testing.T) {
	big := strings.Repeat("y", maxLine)
	tests := []struct {
		name string
		in   string
		want []line
	}{
		{"lines", "a\nb\r\n\nc", []line{{text: "a"}, {text: "b"}, {text: ""}, {text: "c"}}},
		{"exactly the limit", big + "\n" + "next\n", []line{{text: big}, {text: "next"}}},
		{"exactly the limit, CRLF", big + "\r\n", []line{{text: big}}},
		{"one byte over", big + "z\nnext\n", []line{{tooLong: maxLine + 1}, {text: "next"}}},
		{"far over, no newline", big + big + big, []line{{tooLong: 3 * maxLine}}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(tc.in), 64<<10)
			var got []line
			for {
				l, err := readLine(br)
				if l.text != "" || l.tooLong > 0 || err == nil {
					got = append(got, l)
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatal(err)
					}
					break
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(line{})); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
