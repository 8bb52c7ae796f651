package errkind

import (
	"errors"
	"fmt"
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

// Kinded is implemented by errors that know their kind (adkctx's own typed errors).
type Kinded interface {
	ErrorKind() Kind
}

// Of returns the kind of err and a message safe to log (see the package documentation for what it
// may carry). A nil error is (None, "").
func Of(err error) (Kind, string) {
	if err == nil {
		return None, ""
	}
	var k Kinded
	if errors.As(err, &k) {
		// k is the error in the chain that knows its kind: its own message, not its wrappers'
		// (which may quote anything).
		return k.ErrorKind(), k.(error).Error()
	}
	for _, classify := range []func(error) (Kind, string, bool){
		classifyContext,
		classifyModel,
		classifySQLite,
		classifySession,
		classifyPostgres,
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
