package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildProgram builds the package in the current directory (the example) into a temporary
// directory and returns the binary's path: the program as a user runs it, a real OS process.
func buildProgram(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "example")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// offlineEnv is the test's environment without API keys (the offline model) and with a
// configuration directory of its own.
func offlineEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOOGLE_API_KEY=") && !strings.HasPrefix(kv, "GEMINI_API_KEY=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_CONFIG_HOME="+t.TempDir())
}

// A stop request from a service manager or a container runtime (SIGTERM) ends `example web` as
// Ctrl-C does: the compaction the last turn started is drained and stored, the log says so, and
// the database is closed (its write-ahead log merged into the file). Before, SIGTERM killed the
// process on the spot.
func TestWebModeDrainsOnSIGTERM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	bin := buildProgram(t)
	dir := t.TempDir()
	db, logPath := filepath.Join(dir, "s.db"), filepath.Join(dir, "l.jsonl")
	port := freePort(t)
	api := fmt.Sprintf("http://127.0.0.1:%d/api", port)
	cmd := exec.Command(bin, "-db", db, "-log", logPath, "web", "-port", strconv.Itoa(port), "api")
	cmd.Env = offlineEnv(t)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	for i := 0; ; i++ { // the server starts in the background: wait for it, at most 60 s (make test runs five steps at once)
		resp, err := http.Get(api + "/list-apps")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 600 {
			t.Fatalf("the server did not start: %v\n%s", err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Nine turns: during the eighth the requests approach the offline model's soft limit and a
	// token compaction starts in the background.
	const user, sessionID = userID, "sigterm-1"
	call(t, http.MethodPost, api+"/apps/"+appName+"/users/"+user+"/sessions/"+sessionID, map[string]any{}, &struct{}{})
	for _, q := range script(9) {
		var evs []restEvent
		call(t, http.MethodPost, api+"/run", map[string]any{
			"appName": appName, "userId": user, "sessionId": sessionID,
			"newMessage": map[string]any{"role": "user", "parts": []map[string]any{{"text": q}}},
		}, &evs)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		t.Fatalf("the program did not stop within a minute of SIGTERM\n%s", stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && !exit.Exited() {
		t.Fatalf("killed by SIGTERM (%v) instead of stopping\n%s", err, stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 130 {
		t.Fatalf("exit code %d, want 0 or 130 (as Ctrl-C)\n%s", code, stderr.String())
	}
	assertClosed(t, db)
	markers := 0
	for _, ev := range reopen(t, db, sessionID) {
		if readMarker(ev) != nil {
			markers++
		}
	}
	compacted := 0
	for _, e := range filterLog(t, logPath, "compaction", sessionID) {
		if e["outcome"] == "compacted" {
			compacted++
		}
	}
	t.Logf("exit code %d; %d markers stored", cmd.ProcessState.ExitCode(), markers)
	if markers == 0 || compacted != markers {
		t.Errorf("after SIGTERM: %d markers stored, %d compactions logged as compacted; want the same, at least one", markers, compacted)
	}
}
