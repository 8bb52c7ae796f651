package errkind

import (
	"errors"
	"fmt"
	"iter"
	"reflect"
)

// Kind is the class of an error, as logged in the "error_kind" field.
type Kind string

// The kinds. Values are stable: they are log field values and metric attributes.
const (
	None           Kind = ""                // no error
	Timeout        Kind = "timeout"         // a deadline passed
	Canceled       Kind = "canceled"        // the caller gave up
	Quota          Kind = "quota"           // rate limit or quota (HTTP 429, RESOURCE_EXHAUSTED)
	Auth           Kind = "auth"            // missing or rejected credentials (HTTP 401, 403)
	NotFound       Kind = "not_found"       // model, session or resource does not exist (HTTP 404)
	InvalidRequest Kind = "invalid_request" // the request was refused as malformed (HTTP 400)
	InvalidReply   Kind = "invalid_reply"   // a reply that cannot be used (empty, cut off, too large)
	Server         Kind = "server"          // the provider failed (HTTP 5xx)
	Network        Kind = "network"         // the connection failed
	Conflict       Kind = "conflict"        // a concurrent writer changed the session first
	Busy           Kind = "busy"            // the store was locked; retrying later may succeed
	Storage        Kind = "storage"         // any other session-store failure
	Budget         Kind = "budget"          // a request does not fit the model's context budget
	Config         Kind = "config"          // invalid configuration
	Panic          Kind = "panic"           // a component panicked
	Unknown        Kind = "unknown"         // none of the above
)

// Kinds returns every kind but None, in a new slice: the fixed value set of the "error.type"
// metric attribute.
func Kinds() []Kind {
	return []Kind{Timeout, Canceled, Quota, Auth, NotFound, InvalidRequest, InvalidReply, Server, Network,
		Conflict, Busy, Storage, Budget, Config, Panic, Unknown}
}

// Kinded is implemented by errors that know their kind (adkctx's own typed errors): the kind's
// name, one of Kinds (a plain string, so public error types need not name this package).
type Kinded interface {
	ErrorKind() string
}

// Of returns the kind of err and a message safe to log (see the package documentation for what it
// may carry). A nil error is (None, "").
func Of(err error) (Kind, string) {
	if err == nil {
		return None, ""
	}
	var k Kinded
	if errors.As(err, &k) && !isNil(k) {
		// k is the error in the chain that knows its kind: its own message, not its wrappers'
		// (which may quote anything).
		return Kind(k.ErrorKind()), k.(error).Error()
	}
	for _, classify := range []func(error) (Kind, string, bool){
		classifyContext,
		classifyModel,
		classifyHTTP,
		classifyDatabase,
		classifyNetwork,
	} {
		if kind, msg, ok := classify(err); ok {
			return kind, msg
		}
	}
	return Unknown, typeName(err)
}

// typeName is the message for an error nothing recognized: its Go type, never its text.
func typeName(err error) string { return fmt.Sprintf("%T", err) }

// isNil reports a nil pointer (or other nil value) stored in an interface: a recognized type
// whose methods must not be called.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// walk yields err and every error it wraps, depth first, as errors.As visits them; nil pointers
// are skipped.
func walk(err error) iter.Seq[error] {
	return func(yield func(error) bool) {
		var visit func(error) bool
		visit = func(e error) bool {
			for e != nil && !isNil(e) {
				if !yield(e) {
					return false
				}
				switch u := e.(type) {
				case interface{ Unwrap() error }:
					e = u.Unwrap()
				case interface{ Unwrap() []error }:
					for _, inner := range u.Unwrap() {
						if !visit(inner) {
							return false
						}
					}
					return true
				default:
					return true
				}
			}
			return true
		}
		visit(err)
	}
}

// code returns s when it is a code — 1 to limit bytes, each one allowed by ok — and "" otherwise:
// a field that should hold a code and holds anything else is not echoed.
func code(s string, limit int, ok func(byte) bool) string {
	if s == "" || len(s) > limit {
		return ""
	}
	for i := range len(s) {
		if !ok(s[i]) {
			return ""
		}
	}
	return s
}

// upperSnake allows the characters of google.rpc status names and ErrorInfo reasons.
func upperSnake(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' }
