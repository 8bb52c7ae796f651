package recalltools_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/internal/recalltools"
	"github.com/adkctx/adkctx/recall"
)

const benchOutput = outputPrefix + "run_tests-call1.txt"

// countingChunks is the database service, counting the chunk bytes recall reads through it.
type countingChunks struct {
	artifact.Service
	read atomic.Int64
}

func (c *countingChunks) RecallStore(app, user, session string) recall.Store {
	return countingStore{Store: c.Service.(recall.ChunkStore).RecallStore(app, user, session), read: &c.read}
}

type countingStore struct {
	recall.Store
	read *atomic.Int64
}

func (c countingStore) ReadChunks(ctx context.Context, name string, version int64, first, count int) ([][]byte, error) {
	chunks, err := c.Store.ReadChunks(ctx, name, version, first, count)
	for _, ch := range chunks {
		c.read.Add(int64(len(ch)))
	}
	return chunks, err
}

// benchRecall runs one recall call on the session "s1" of svc.
func benchRecall(b *testing.B, e *glue.Engine, svc artifact.Service, tool string, args map[string]any) {
	b.Helper()
	if _, err := e.Recall(context.Background(), nil, glue.RecallCall{Tool: tool, Args: args,
		Store: recalltools.SessionStore(svc, appName, "user", "s1")}); err != nil {
		b.Fatal(err)
	}
}

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
	if err := dbartifact.Migrate(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	services := map[string]artifact.Service{"sqlite": &countingChunks{Service: dbSvc}, "inmemory": artifact.InMemoryService()}
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
	e, err := glue.New(adkctx.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"sqlite", "inmemory"} {
		b.Run(name, func(b *testing.B) {
			svc := services[name]
			var read int64
			for b.Loop() {
				// A store per call, as each tool call builds one.
				if c, ok := svc.(*countingChunks); ok {
					before := c.read.Load()
					benchRecall(b, e, svc, recall.ToolReadOutput, map[string]any{"name": benchOutput, "range": "27000-27100"})
					read = c.read.Load() - before
				} else {
					benchRecall(b, e, svc, recall.ToolReadOutput, map[string]any{"name": benchOutput, "range": "27000-27100"})
					read = int64(size) // loaded whole on every call
				}
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
	e, err := glue.New(adkctx.Config{})
	if err != nil {
		b.Fatal(err)
	}
	svc := services["sqlite"].(*countingChunks)
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"substring", map[string]any{"query": "REQ-7f3a9c", "name": benchOutput}},
		{"regexp", map[string]any{"query": `id=REQ-[0-9a-f]{6}`, "regexp": true, "name": benchOutput}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var read int64
			for b.Loop() {
				before := svc.read.Load()
				benchRecall(b, e, svc, recall.ToolSearchOutputs, tc.args)
				read = svc.read.Load() - before
			}
			b.ReportMetric(float64(read), "bytes_read/op")
			b.ReportMetric(float64(size), "output_bytes")
		})
	}
}
