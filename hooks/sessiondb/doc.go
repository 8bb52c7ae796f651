// Package sessiondb adds the index adk-go's database session service needs to read a session
// without scanning every stored event.
//
// adk-go's session/database service (v1 and v2 alike) keeps events in a table "events" whose
// primary key starts with the event's id, and reads a session's events with
//
//	SELECT * FROM events WHERE app_name = ? AND user_id = ? AND session_id = ?
//	  [AND timestamp >= ?] ORDER BY timestamp DESC [LIMIT ?]
//
// Without an index on the session that query reads the whole table for every Get, whatever the
// session's length: an 8-event session in a table of 50,000 events of about 3 KB takes 550–640 ms
// to read on SQLite and 4–10 ms on PostgreSQL, about 3 ms and 1.5 ms with the index
// (BenchmarkGetSmallSession, 2 shared cores). [CreateIndex] creates it, on (app_name, user_id,
// session_id, timestamp), named [IndexName]: adkctx's prefix, which no adk-go migration uses. Run
// it once when the application starts, after database.AutoMigrate and before the service serves:
//
//	svc, err := database.NewSessionService(sqlite.Open(path))      // or postgres.Open(dsn)
//	err = database.AutoMigrate(svc)
//	db, err := gorm.Open(sqlite.Open(path))                        // a handle on the same database
//	err = sessiondb.CreateIndex(ctx, db, sessiondb.Config{Logger: logger})
//
// It is idempotent: the index, once there, is left as it is; an index of that name on anything else
// is reported ([*ConflictError]), never replaced. On PostgreSQL it is built
// CONCURRENTLY, so a live table keeps taking writes meanwhile (which is why it refuses a handle
// inside a transaction: [ErrInTransaction]); when another process is building it, CreateIndex
// waits for that build; an invalid index left by an interrupted build is dropped and built
// again, once a second look a poll interval later still finds it invalid with no build (a
// build's last commit can land between the two). On SQLite the build holds the database's write lock for its duration (0.7 s for 50,000
// events of 3 KB).
//
// [CheckIndex] reads the catalog and says whether the index is in place. adkctx's hooks run it
// once when they are wired over adk-go's database service (Hooks.Wire, Hooks.SessionService):
// without the index they log one warning naming CreateIndex, and Hooks.Check reports
// session_index_missing.
//
// Schemas managed by a migration tool can carry the same statement instead:
//
//	CREATE INDEX CONCURRENTLY IF NOT EXISTS adkctx_events_session_time
//	  ON events (app_name, user_id, session_id, "timestamp");        -- PostgreSQL, outside a transaction
//	CREATE INDEX IF NOT EXISTS adkctx_events_session_time
//	  ON events (app_name, user_id, session_id, "timestamp");        -- SQLite
//
// Only SQLite and PostgreSQL are supported (a [*DialectError] otherwise).
package sessiondb
