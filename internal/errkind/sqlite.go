package errkind

import (
	"fmt"
	"iter"
	"reflect"
)

// SQLite primary result codes (https://sqlite.org/rescode.html); an extended code keeps its
// primary code in the low byte.
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// classifySQLite recognizes the driver error of the SQLite driver adkctx's stores run on
// (github.com/glebarez/go-sqlite, under the gorm dialector github.com/glebarez/sqlite): a *Error
// whose Code() int is the SQLite result code. SQLITE_BUSY and SQLITE_LOCKED (and their extended
// codes) are Busy, every other code Storage.
//
// The type is recognized by its package path and name rather than imported: importing the driver
// would link it into every program using adkctx and register it with database/sql as "sqlite",
// the name modernc.org/sqlite registers too — a program using that driver would panic at start.
func classifySQLite(err error) (Kind, string, bool) {
	code, ok := sqliteCode(err)
	if !ok {
		return "", "", false
	}
	kind := Storage
	if p := code & 0xff; p == sqliteBusy || p == sqliteLocked {
		kind = Busy
	}
	// The code only: a SQLite message may quote SQL text, and through it stored values.
	return kind, fmt.Sprintf("sqlite %s (code %d)", sqliteCodeName(code&0xff), code), true
}

// sqliteCode returns the result code of the first SQLite driver error in err's tree.
func sqliteCode(err error) (int, bool) {
	for e := range walk(err) {
		c, ok := e.(interface{ Code() int })
		if !ok {
			continue
		}
		t := reflect.TypeOf(e)
		if t.Kind() != reflect.Pointer || t.Elem().Name() != "Error" || reflect.ValueOf(e).IsNil() {
			continue
		}
		if t.Elem().PkgPath() == "github.com/glebarez/go-sqlite" {
			return c.Code(), true
		}
	}
	return 0, false
}

// walk yields err and every error it wraps, depth first, as errors.As visits them.
func walk(err error) iter.Seq[error] {
	return func(yield func(error) bool) {
		var visit func(error) bool
		visit = func(e error) bool {
			for e != nil {
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

// sqliteCodeName names a primary result code.
func sqliteCodeName(primary int) string {
	switch primary {
	case 1:
		return "SQLITE_ERROR"
	case 2:
		return "SQLITE_INTERNAL"
	case 3:
		return "SQLITE_PERM"
	case 4:
		return "SQLITE_ABORT"
	case sqliteBusy:
		return "SQLITE_BUSY"
	case sqliteLocked:
		return "SQLITE_LOCKED"
	case 7:
		return "SQLITE_NOMEM"
	case 8:
		return "SQLITE_READONLY"
	case 9:
		return "SQLITE_INTERRUPT"
	case 10:
		return "SQLITE_IOERR"
	case 11:
		return "SQLITE_CORRUPT"
	case 12:
		return "SQLITE_NOTFOUND"
	case 13:
		return "SQLITE_FULL"
	case 14:
		return "SQLITE_CANTOPEN"
	case 15:
		return "SQLITE_PROTOCOL"
	case 16:
		return "SQLITE_EMPTY"
	case 17:
		return "SQLITE_SCHEMA"
	case 18:
		return "SQLITE_TOOBIG"
	case 19:
		return "SQLITE_CONSTRAINT"
	case 20:
		return "SQLITE_MISMATCH"
	case 21:
		return "SQLITE_MISUSE"
	case 22:
		return "SQLITE_NOLFS"
	case 23:
		return "SQLITE_AUTH"
	case 24:
		return "SQLITE_FORMAT"
	case 25:
		return "SQLITE_RANGE"
	case 26:
		return "SQLITE_NOTADB"
	case 27:
		return "SQLITE_NOTICE"
	case 28:
		return "SQLITE_WARNING"
	}
	return "SQLITE_UNKNOWN"
}
