package sessiondb_test

import (
	"testing"
	"time"

	"google.golang.org/adk/session"

	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// fillers store $1 events of ~3 KB each (content JSON of random text, like a tool result) of
// another session, per backend.
var fillers = map[string]string{
	"sqlite": `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
		INSERT INTO events (id, app_name, user_id, session_id, timestamp, content)
		SELECT 'big-' || n, 'app', 'other', 'filler', datetime('2025-01-01', '+' || n || ' seconds'),
		       '{"role":"user","parts":[{"text":"' || hex(randomblob(1500)) || '"}]}' FROM g`,
	"postgres": `INSERT INTO events (id, app_name, user_id, session_id, "timestamp", content)
		SELECT 'big-' || g, 'app', 'other', 'filler', timestamptz '2025-01-01' + g * interval '1 second',
		       jsonb_build_object('role', 'user', 'parts', jsonb_build_array(jsonb_build_object('text',
		         (SELECT string_agg(md5(random()::text || g::text || k::text), '') FROM generate_series(1, 94) AS k))))
		FROM generate_series(1, ?) AS g`,
}

// BenchmarkGetSmallSession reads an 8-event session through adk-go's service in a table holding
// 50,000 events of another session (~3 KB each), without and with the session index, and reports
// the time per Get (ms/get) and the time CreateIndex took on that table.
//
//	go test -run '^$' -bench BenchmarkGetSmallSession ./sessiondb/   (in hooks/)
func BenchmarkGetSmallSession(b *testing.B) {
	for name, be := range backends() {
		b.Run(name, func(b *testing.B) {
			svc, db, _ := be.open(b)
			fill(b, svc, db, fillers[name], 50_000)
			appendEvents(b, svc, 8)
			get := func() time.Duration {
				start := time.Now()
				resp, err := svc.Get(b.Context(), &session.GetRequest{AppName: "app", UserID: "u1", SessionID: "s1"})
				if err != nil {
					b.Fatal(err)
				}
				if n := resp.Session.Events().Len(); n != 8 {
					b.Fatalf("%d events", n)
				}
				return time.Since(start)
			}
			const gets = 10
			var without, with, create time.Duration
			for b.Loop() {
				without, with = 0, 0
				_ = db.Exec("DROP INDEX IF EXISTS " + sessiondb.IndexName)
				for range gets {
					without += get()
				}
				start := time.Now()
				if err := sessiondb.CreateIndex(b.Context(), db, sessiondb.Config{}); err != nil {
					b.Fatal(err)
				}
				create = time.Since(start)
				for range gets {
					with += get()
				}
			}
			b.ReportMetric(float64(without.Microseconds())/1000/gets, "ms/get_without_index")
			b.ReportMetric(float64(with.Microseconds())/1000/gets, "ms/get_with_index")
			b.ReportMetric(float64(create.Microseconds())/1000, "ms_to_create_index")
		})
	}
}
