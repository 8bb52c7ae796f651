package recalltools_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/recalltools"
	"github.com/adkctx/adkctx/recall"
)

const benchOutput = recall.OutputPrefix + "run_tests-call1.txt"

// benchStores returns a 2 MB test log saved in the database service (SQLite) and in adk-go's
// in-memory service, as one session's recall stores.
func benchStores(b *testing.B) (map[string]artifact.Service, int) {
	b.Helper()
	data := []byte(testLog(28000, 14000, "--- FAIL: TestCheckout order id=REQ-7f3a9c"))
	db, err := gorm.Open(sqlite.Open(filepath.Join(b.TempDir(), "a.db")), &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)})
	if err != nil {
		b.Fatal(err)
	}
	if conns, err := db.DB(); err == nil {
		b.Cleanup(func() { conns.Close() })
	}
	dbSvc := dbartifact.NewService(db, dbartifact.Config{})
	if err := dbSvc.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	services := map[string]artifact.Service{"sqlite": dbSvc, "inmemory": artifact.InMemoryService()}
	for _, svc := range services {
		if _, err := svc.Save(context.Background(), &artifact.SaveRequest{AppName: appName, UserID: "user", SessionID: "s1", FileName: benchOutput,
			Part: genai.NewPartFromBytes(data, "text/plain; charset=utf-8")}); err != nil {
			b.Fatal(err)
		}
	}
	return services, len(data)
}

// BenchmarkReadPage reports the bytes one page read costs on a 2 MB output: the chunks holding
// the page on the database service; the whole output on services without chunks.
func BenchmarkReadPage(b *testing.B) {
	services, size := benchStores(b)
	for _, name := range []string{"sqlite", "inmemory"} {
		b.Run(name, func(b *testing.B) {
			var read int64
			for b.Loop() {
				// A store per call, as each tool call builds one.
				st := recalltools.SessionStore(services[name], appName, "user", "s1")
				res, err := recall.ReadOutput(context.Background(), st, benchOutput, "27000-27100", recall.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				read = res.BytesRead
			}
			if name == "inmemory" {
				read = int64(size) // loaded whole on every call
			}
			b.ReportMetric(float64(read), "bytes_read/op")
			b.ReportMetric(float64(size), "output_bytes")
		})
	}
}

// BenchmarkSearch reports the bytes one search of a 2 MB output reads (all of it: a search
// scans) and its time, substring and regexp.
func BenchmarkSearch(b *testing.B) {
	services, size := benchStores(b)
	for _, tc := range []struct {
		name string
		req  recall.SearchRequest
	}{
		{"substring", recall.SearchRequest{Query: "REQ-7f3a9c", Name: benchOutput}},
		{"regexp", recall.SearchRequest{Query: `id=REQ-[0-9a-f]{6}`, Regexp: true, Name: benchOutput}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var read int64
			for b.Loop() {
				res, err := recall.SearchOutputs(context.Background(), recalltools.SessionStore(services["sqlite"], appName, "user", "s1"), tc.req, recall.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				read = res.BytesRead
			}
			b.ReportMetric(float64(read), "bytes_read/op")
			b.ReportMetric(float64(size), "output_bytes")
		})
	}
}
