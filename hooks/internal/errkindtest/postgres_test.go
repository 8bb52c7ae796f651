package errkindtest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/hooks/internal/pgtest"
)

// secret stands for conversation text stored in a row: it must never reach a classified message.
const secret = "secret-row-value-7f3a"

// anyPort matches the port of a loopback address in a message.
var anyPort = regexp.MustCompile(`:\d+:`)

// Every kind is provoked for real on the server; the classification sees the error as the
// driver returns it.
func TestPostgresProvoked(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provoke  func(t *testing.T) error
		wantKind string
		wantMsg  string
	}{
		{"serialization_failure", provokeSerializationFailure, "conflict",
			"SQLSTATE 40001 (*pgconn.PgError)"},
		{"deadlock_detected", provokeDeadlock, "conflict",
			"SQLSTATE 40P01 (*pgconn.PgError)"},
		{"lock_not_available/nowait", provokeNowait, "busy",
			"SQLSTATE 55P03 (*pgconn.PgError)"},
		{"lock_not_available/adk_append_event", provokeLockTimeoutInAppendEvent, "busy",
			"SQLSTATE 55P03 (*pgconn.PgError)"},
		{"too_many_connections", provokeTooManyConnections, "busy",
			"SQLSTATE 53300 (*pgconn.PgError)"},
		{"query_canceled/statement_timeout", provokeStatementTimeout, "canceled",
			"SQLSTATE 57014 (*pgconn.PgError)"},
		{"query_canceled/pg_cancel_backend", provokeCancelBackend, "canceled",
			"SQLSTATE 57014 (*pgconn.PgError)"},
		{"protocol_violation", provokeProtocolViolation, "network",
			"SQLSTATE 08P01 (*pgconn.PgError)"},
		{"admin_shutdown", provokeTerminateBackend, "network",
			"SQLSTATE 57P01 (*pgconn.PgError)"},
		// pgconn's ConnectError wraps the dial error: classified as a network error, by its type.
		{"connection_refused", provokeConnectionRefused, "network",
			"dial tcp 127.0.0.1:PORT: connection refused"},
		{"invalid_password", provokeWrongPassword, "auth",
			"SQLSTATE 28P01 (*pgconn.PgError)"},
		{"unique_violation", provokeUniqueViolation, "storage",
			"SQLSTATE 23505 (*pgconn.PgError)"},
		{"invalid_text_representation", provokeInvalidText, "storage",
			"SQLSTATE 22P02 (*pgconn.PgError)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.provoke(t)
			if err == nil {
				t.Fatal("nothing failed: the condition was not provoked")
			}
			kind, msg := glue.ErrorKind(err)
			if kind != tc.wantKind || anyPort.ReplaceAllString(msg, ":PORT:") != tc.wantMsg {
				t.Errorf("Of(%v)\n = %s, %q\nwant %s, %q", err, kind, msg, tc.wantKind, tc.wantMsg)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("message %q quotes row data", msg)
			}
		})
	}
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func exec(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// A database with table t holding rows (1, 0) and (2, 0), and two connections to it.
func twoConns(t *testing.T) (dsn string, a, b *pgx.Conn) {
	t.Helper()
	dsn = pgtest.DSN(t)
	a, b = connect(t, dsn), connect(t, dsn)
	exec(t, a, "CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)")
	exec(t, a, "INSERT INTO t VALUES (1, 0), (2, 0)")
	return dsn, a, b
}

// A serializable transaction updates a row another transaction changed after its snapshot.
func provokeSerializationFailure(t *testing.T) error {
	_, a, b := twoConns(t)
	exec(t, a, "BEGIN ISOLATION LEVEL SERIALIZABLE")
	exec(t, a, "SELECT v FROM t WHERE id = 1") // takes the snapshot
	exec(t, b, "BEGIN ISOLATION LEVEL SERIALIZABLE")
	exec(t, b, "UPDATE t SET v = v + 1 WHERE id = 1")
	exec(t, b, "COMMIT")
	_, err := a.Exec(t.Context(), "UPDATE t SET v = v + 1 WHERE id = 1")
	exec(t, a, "ROLLBACK")
	return err
}

// Each transaction holds one row and asks for the other's: the server aborts exactly one.
func provokeDeadlock(t *testing.T) error {
	_, a, b := twoConns(t)
	exec(t, a, "BEGIN")
	exec(t, a, "UPDATE t SET v = 1 WHERE id = 1")
	exec(t, b, "BEGIN")
	exec(t, b, "UPDATE t SET v = 1 WHERE id = 2")
	// The aborted side rolls back at once, so the survivor gets its row.
	update := func(c *pgx.Conn, sql string) error {
		_, err := c.Exec(t.Context(), sql)
		if err != nil {
			_, _ = c.Exec(t.Context(), "ROLLBACK")
		}
		return err
	}
	errA := make(chan error, 1)
	go func() { errA <- update(a, "UPDATE t SET v = 2 WHERE id = 2") }()
	errB := update(b, "UPDATE t SET v = 2 WHERE id = 1")
	ea := <-errA
	exec(t, a, "ROLLBACK") // a warning, not an error, where the transaction is already gone
	exec(t, b, "ROLLBACK")
	if (ea == nil) == (errB == nil) {
		t.Fatalf("want exactly one transaction aborted, got %v and %v", ea, errB)
	}
	return errors.Join(ea, errB)
}

// FOR UPDATE NOWAIT on a row another transaction has locked.
func provokeNowait(t *testing.T) error {
	_, a, b := twoConns(t)
	exec(t, a, "BEGIN")
	exec(t, a, "SELECT * FROM t WHERE id = 1 FOR UPDATE")
	_, err := b.Exec(t.Context(), "SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT")
	exec(t, a, "ROLLBACK")
	return err
}

// adk-go's database service appends an event to a session whose row another transaction holds;
// its connections run with lock_timeout, so the append fails instead of waiting. The error is
// the one adk-go returns (wrapped by its transaction code), and a later append succeeds.
func provokeLockTimeoutInAppendEvent(t *testing.T) error {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	svc := pgtest.SessionService(t, pgtest.OpenSQL(t, withParam(t, dsn, "lock_timeout", "50ms")))
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	locker := connect(t, dsn)
	exec(t, locker, "BEGIN")
	exec(t, locker, "SELECT * FROM sessions WHERE id = 's' FOR UPDATE")
	appendErr := svc.AppendEvent(ctx, created.Session, textEvent(ctx, "e1", secret))
	exec(t, locker, "ROLLBACK")

	got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(ctx, got.Session, textEvent(ctx, "e2", "after the lock")); err != nil {
		t.Errorf("append after the lock was released: %v", err)
	}
	return appendErr
}

func textEvent(ctx context.Context, id, text string) *session.Event {
	e := session.NewEventWithContext(ctx, "inv-"+id)
	e.ID = id
	e.Author = "user"
	e.Content = genai.NewContentFromText(text, genai.RoleUser)
	return e
}

// The database allows one connection; a second is refused by the server.
func provokeTooManyConnections(t *testing.T) error {
	dsn := pgtest.DSN(t)
	a := connect(t, dsn)
	exec(t, a, "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I CONNECTION LIMIT 1', current_database()); END $$")
	c, err := pgx.Connect(t.Context(), dsn)
	if err == nil {
		c.Close(context.Background())
	}
	return err
}

func provokeStatementTimeout(t *testing.T) error {
	_, a, _ := twoConns(t)
	exec(t, a, "SET statement_timeout = '10ms'")
	_, err := a.Exec(t.Context(), "SELECT pg_sleep(30)")
	return err
}

// running starts sql on c in the background and returns its pid once the server shows it waiting
// in pg_sleep; the error arrives on the channel.
func running(t *testing.T, c, observer *pgx.Conn, sql string) (int, <-chan error) {
	t.Helper()
	var pid int
	if err := c.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.WithoutCancel(t.Context()), sql)
		done <- err
	}()
	for i := 0; ; i++ {
		var sleeping bool
		if err := observer.QueryRow(t.Context(),
			"SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'PgSleep')", pid).Scan(&sleeping); err != nil {
			t.Fatal(err)
		}
		if sleeping {
			return pid, done
		}
		if i == 2000 {
			t.Fatalf("backend %d never reached pg_sleep", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func provokeCancelBackend(t *testing.T) error {
	_, a, b := twoConns(t)
	pid, done := running(t, a, b, "SELECT pg_sleep(60)")
	exec(t, b, "SELECT pg_cancel_backend($1)", pid)
	return <-done
}

// The server ends a session in the middle of a statement.
func provokeTerminateBackend(t *testing.T) error {
	_, a, b := twoConns(t)
	pid, done := running(t, a, b, "SELECT pg_sleep(60)")
	exec(t, b, "SELECT pg_terminate_backend($1)", pid)
	return <-done
}

// A binary int4 parameter two bytes long: the server rejects the Bind message itself.
func provokeProtocolViolation(t *testing.T) error {
	_, a, _ := twoConns(t)
	_, err := a.PgConn().ExecParams(t.Context(), "SELECT $1::int4", [][]byte{{0, 1}}, []uint32{23}, []int16{1}, nil).Close()
	return err
}

// A loopback port nobody listens on (no server needed).
func provokeConnectionRefused(t *testing.T) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c, err := pgx.Connect(t.Context(), fmt.Sprintf("postgres://nobody@127.0.0.1:%d/none?sslmode=disable&connect_timeout=5", port))
	if err == nil {
		c.Close(context.Background())
	}
	return err
}

func provokeWrongPassword(t *testing.T) error {
	cfg, err := pgx.ParseConfig(pgtest.ServerDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = secret
	c, err := pgx.ConnectConfig(t.Context(), cfg)
	if err == nil {
		c.Close(context.Background())
	}
	return err
}

// The error's Detail quotes the key; the classified message must not.
func provokeUniqueViolation(t *testing.T) error {
	_, a, _ := twoConns(t)
	exec(t, a, "CREATE TABLE k (id text PRIMARY KEY)")
	exec(t, a, "INSERT INTO k VALUES ($1)", secret)
	_, err := a.Exec(t.Context(), "INSERT INTO k VALUES ($1)", secret)
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || !strings.Contains(pg.Detail, secret) {
		t.Fatalf("expected a unique violation whose detail quotes the key, got %v", err)
	}
	return err
}

// The error's Message quotes the value.
func provokeInvalidText(t *testing.T) error {
	_, a, _ := twoConns(t)
	_, err := a.Exec(t.Context(), "SELECT $1::text::int", secret)
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || !strings.Contains(pg.Message, secret) {
		t.Fatalf("expected an invalid integer whose message quotes the value, got %v", err)
	}
	return err
}

// withParam adds a run-time parameter to a URL DSN (scripts/postgres.sh prints URLs).
func withParam(t *testing.T, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Skipf("$%s is not a postgres:// URL", pgtest.EnvDSN)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// Classification that needs no server: wrapping, codes by class, and fields that must not be
// echoed (message, detail, severity, a malformed code).
func TestPostgresUnit(t *testing.T) {
	_, parseErr := pgx.ParseConfig("postgres://u:" + secret + "@127.0.0.1:notaport/db")
	for _, tc := range []struct {
		name     string
		err      error
		wantKind string
		wantMsg  string
	}{
		{"wrapped", fmt.Errorf("failed to save event: %w", &pgconn.PgError{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "40001", Message: secret, Detail: secret}),
			"conflict", "SQLSTATE 40001 (*pgconn.PgError)"},
		{"other code", &pgconn.PgError{Severity: "ERROR", Code: "22P05", Message: secret},
			"storage", "SQLSTATE 22P05 (*pgconn.PgError)"},
		{"connection class", &pgconn.PgError{Severity: "FATAL", Code: "08006"},
			"network", "SQLSTATE 08006 (*pgconn.PgError)"},
		{"authorization class", &pgconn.PgError{Severity: "FATAL", Code: "28000"},
			"auth", "SQLSTATE 28000 (*pgconn.PgError)"},
		{"unknown class", &pgconn.PgError{Severity: "ERROR", Code: "ZZ123"},
			"storage", "SQLSTATE ZZ123 (*pgconn.PgError)"},
		{"severity not echoed", &pgconn.PgError{Severity: "ERR " + secret, Code: "57014"},
			"canceled", "SQLSTATE 57014 (*pgconn.PgError)"},
		{"malformed code", &pgconn.PgError{Severity: "ERROR", Code: secret},
			"storage", "SQLSTATE malformed (*pgconn.PgError)"},
		{"parse config: no kind without the driver's type", parseErr, "unknown", "*pgconn.ParseConfigError"},
		{"deadline first", fmt.Errorf("%w: %w", context.DeadlineExceeded, &pgconn.PgError{Code: "57014"}),
			"timeout", "deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error to classify")
			}
			kind, msg := glue.ErrorKind(tc.err)
			if kind != tc.wantKind || msg != tc.wantMsg {
				t.Errorf("Of = %s, %q; want %s, %q", kind, msg, tc.wantKind, tc.wantMsg)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("message %q quotes the error's text", msg)
			}
		})
	}
}
