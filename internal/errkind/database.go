package errkind

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// classifyDatabase recognizes session-store errors by behaviour, linking no driver: a SQLSTATE
// (PostgreSQL drivers), a SQLite result code, or adk-go's stale-session refusal. The message is
// the bare code and the driver error's Go type: a driver's message is localized and may quote SQL
// text and, through it, stored values.
func classifyDatabase(err error) (Kind, string, bool) {
	// A SQLSTATE first: a failed connect wraps the server's refusal (bad password, too many
	// clients) around a network error.
	var s interface{ SQLState() string }
	if errors.As(err, &s) && !isNil(s) {
		state := code(s.SQLState(), 5, upperAlnum)
		kind := sqlStateKind(state)
		if len(state) != 5 {
			state = "malformed"
		}
		return kind, fmt.Sprintf("SQLSTATE %s (%s)", state, typeName(s.(error))), true
	}
	if kind, msg, ok := classifySQLite(err); ok {
		return kind, msg, true
	}
	for e := range walk(err) {
		if strings.HasPrefix(e.Error(), staleSession) {
			return Conflict, "stale session: the session was written after it was read", true
		}
	}
	return "", "", false
}

func upperAlnum(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// sqlStateKind maps a SQLSTATE (PostgreSQL's Appendix A) to a kind.
func sqlStateKind(state string) Kind {
	switch state {
	case "40001", "40P01": // serialization_failure, deadlock_detected: retry the transaction
		return Conflict
	case "55P03", "53300": // lock_not_available, too_many_connections: retry later
		return Busy
	case "57014": // query_canceled: statement_timeout or a cancel request
		return Canceled
	case "57P01", "57P02", "57P03": // the server ended the session or is not accepting any
		return Network
	}
	switch {
	case strings.HasPrefix(state, "08"): // connection_exception
		return Network
	case strings.HasPrefix(state, "28"): // invalid_authorization_specification
		return Auth
	}
	return Storage
}

// staleSession starts the error adk-go's database session service returns for an append
// through a session read before the session's last update (session/database, applyEvent). It
// is a plain fmt.Errorf error: only adk-go's own fixed prefix identifies it, and nothing after
// the prefix is read.
const staleSession = "stale session error:"

// SQLite primary result codes (https://sqlite.org/rescode.html); an extended code keeps its
// primary code in the low byte.
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// classifySQLite recognizes the error of a SQLite driver — a *Error with a Code() int method
// holding the result code, from github.com/glebarez/go-sqlite (under the gorm dialector
// github.com/glebarez/sqlite) or modernc.org/sqlite, which it forks. SQLITE_BUSY and
// SQLITE_LOCKED (and their extended codes) are Busy, every other code Storage.
//
// The type is recognized by its package path and name rather than imported: importing the driver
// would link it into every program using adkctx and register it with database/sql as "sqlite",
// the name both drivers register — a program using the other one would panic at start.
func classifySQLite(err error) (Kind, string, bool) {
	for e := range walk(err) {
		c, ok := e.(interface{ Code() int })
		t := reflect.TypeOf(e)
		if !ok || t.Kind() != reflect.Pointer || t.Elem().Name() != "Error" {
			continue
		}
		if pkg := t.Elem().PkgPath(); pkg != "github.com/glebarez/go-sqlite" && pkg != "modernc.org/sqlite" {
			continue
		}
		code := c.Code()
		kind := Storage
		if p := code & 0xff; p == sqliteBusy || p == sqliteLocked {
			kind = Busy
		}
		return kind, fmt.Sprintf("SQLite code %d (%s)", code, typeName(e)), true
	}
	return "", "", false
}
