package errkind

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// sqlStateError and statusError stand for driver and SDK errors the fuzzer fills.
type sqlStateError struct{ state, text string }

func (e *sqlStateError) Error() string    { return e.text }
func (e *sqlStateError) SQLState() string { return e.state }

type statusError struct {
	StatusCode int
	text       string
}

func (e *statusError) Error() string  { return e.text }
func (e *statusError) Reason() string { return e.text }

// FuzzOf fills every field a classifier reads with whatever a provider, a proxy or a driver may
// send: the message is one line of printable ASCII, bounded, and holds a field only when that
// field is a code (free text, which carries a space or a lower-case letter, never appears).
func FuzzOf(f *testing.F) {
	for _, s := range []string{"", "RESOURCE_EXHAUSTED", "API_KEY_INVALID", "40001", "INTERNAL\r\nX-Injected: 1",
		"my key is sk-live-1", "\xff\xfe bad utf8", "é\u2028\u202e\x1b[31m", strings.Repeat("A", 300), "127.0.0.1:80", "http://u:p@h/p?k=v"} {
		f.Add(429, s, s)
	}
	f.Add(0, "", "")
	f.Add(-1, "57P01", "[::1]:5432")
	f.Fuzz(func(t *testing.T, status int, field, text string) {
		free := "free text " + text // a space: never a code
		details := []map[string]any{{"@type": errorInfoType, "reason": field, "metadata": map[string]any{"k": free}}}
		for _, err := range []error{
			fmt.Errorf("call %s: %w", free, genai.APIError{Code: status, Status: field, Message: free, Details: details}),
			&statusError{StatusCode: status, text: field},
			fmt.Errorf("%s: %w", free, &sqlStateError{state: field, text: free}),
			&url.Error{Op: field, URL: text, Err: &net.OpError{Op: field, Net: text, Err: fmt.Errorf("%s", free)}},
			&net.OpError{Op: field, Net: field, Addr: &net.UnixAddr{Name: text, Net: "unix"}, Err: fmt.Errorf("%s", free)},
		} {
			kind, msg := Of(err)
			if kind == None || msg == "" {
				t.Fatalf("Of(%#v) = %q, %q", err, kind, msg)
			}
			if len(msg) > 2*maxAddress+100 {
				t.Errorf("Of(%#v): %d bytes", err, len(msg))
			}
			for i := range len(msg) {
				if msg[i] < ' ' || msg[i] >= 0x7f {
					t.Fatalf("Of(%#v) = %q: byte %#x", err, msg, msg[i])
				}
			}
			if strings.Contains(msg, "free text") {
				t.Errorf("Of(%#v) = %q: quotes free text", err, msg)
			}
		}
	})
}
