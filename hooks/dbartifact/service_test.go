package dbartifact_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/glebarez/sqlite"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/internal/longrun"
	"github.com/adkctx/adkctx/recall"
)

// outputPrefix starts the names of the tool outputs adkctx saves.
const outputPrefix = "adkctx-tool-output-"

func openSQLite(t testing.TB) *gorm.DB {
	t.Helper()
	return openSQLiteAt(t, filepath.Join(t.TempDir(), "artifacts.db"))
}

func openSQLiteAt(t testing.TB, path string) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(sqlite.Open(path+"?_pragma=busy_timeout(10000)"), &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}

func newService(t testing.TB, db *gorm.DB, cfg dbartifact.Config) artifact.Service {
	t.Helper()
	svc := dbartifact.NewService(db, cfg)
	if err := dbartifact.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return svc
}

// op is one call on an artifact service; it returns what the caller can observe.
type op struct {
	name string
	run  func(ctx context.Context, s artifact.Service) (any, error)
}

func save(session, name string, part *genai.Part) op {
	return op{"save " + session + "/" + name, func(ctx context.Context, s artifact.Service) (any, error) {
		r, err := s.Save(ctx, &artifact.SaveRequest{AppName: "app", UserID: "u", SessionID: session, FileName: name, Part: part})
		if err != nil {
			return nil, err
		}
		return r.Version, nil
	}}
}

func load(session, name string, version int64) op {
	return op{fmt.Sprintf("load %s/%s@%d", session, name, version), func(ctx context.Context, s artifact.Service) (any, error) {
		r, err := s.Load(ctx, &artifact.LoadRequest{AppName: "app", UserID: "u", SessionID: session, FileName: name, Version: version})
		if err != nil {
			return nil, err
		}
		return r.Part, nil
	}}
}

func del(session, name string, version int64) op {
	return op{fmt.Sprintf("delete %s/%s@%d", session, name, version), func(ctx context.Context, s artifact.Service) (any, error) {
		return nil, s.Delete(ctx, &artifact.DeleteRequest{AppName: "app", UserID: "u", SessionID: session, FileName: name, Version: version})
	}}
}

func list(user, session string) op {
	return op{"list " + user + "/" + session, func(ctx context.Context, s artifact.Service) (any, error) {
		r, err := s.List(ctx, &artifact.ListRequest{AppName: "app", UserID: user, SessionID: session})
		if err != nil {
			return nil, err
		}
		return r.FileNames, nil
	}}
}

func versions(session, name string) op {
	return op{"versions " + session + "/" + name, func(ctx context.Context, s artifact.Service) (any, error) {
		r, err := s.Versions(ctx, &artifact.VersionsRequest{AppName: "app", UserID: "u", SessionID: session, FileName: name})
		if err != nil {
			return nil, err
		}
		return r.Versions, nil
	}}
}

func getVersion(session, name string, version int64) op {
	return op{fmt.Sprintf("get version %s/%s@%d", session, name, version), func(ctx context.Context, s artifact.Service) (any, error) {
		r, err := s.GetArtifactVersion(ctx, &artifact.GetArtifactVersionRequest{AppName: "app", UserID: "u", SessionID: session, FileName: name, Version: version})
		if err != nil {
			return nil, err
		}
		return [2]any{r.ArtifactVersion.Version, r.ArtifactVersion.MimeType}, nil
	}}
}

func raw(name string, f func(ctx context.Context, s artifact.Service) error) op {
	return op{name, func(ctx context.Context, s artifact.Service) (any, error) { return nil, f(ctx, s) }}
}

func bigText() string {
	var b strings.Builder
	for i := 0; b.Len() < 600<<10; i++ {
		fmt.Fprintf(&b, "line %d: ok   \tgithub.com/x/y/pkg%d\t0.%03ds\n", i, i%300, i%1000)
	}
	return b.String()
}

func binaryBlob(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + i/256)
	}
	return b
}

// script is adk-go's artifact conventions as a sequence of calls: versions, newest by default,
// delete one or all, user-scoped names seen from every session, validation, not-found errors.
func script() []op {
	text := bigText()
	return []op{
		save("s1", "file1", genai.NewPartFromBytes([]byte("file v1"), "text/plain")),
		save("s1", "file1", genai.NewPartFromBytes([]byte("file v2"), "text/plain")),
		save("s1", "file1", genai.NewPartFromBytes([]byte("file v3"), "text/plain")),
		save("s1", "file2", genai.NewPartFromBytes([]byte("file v3"), "application/json")),
		save("s1", "file3", genai.NewPartFromText("file v1")),
		load("s1", "file1", 0), load("s1", "file1", 1), load("s1", "file1", 2), load("s1", "file1", 9),
		load("s1", "file3", 0), load("s2", "file1", 0),
		list("u", "s1"), list("u", "s2"), list("other", "s1"),
		versions("s1", "file1"), versions("s1", "missing"),
		getVersion("s1", "file1", 0), getVersion("s1", "file1", 2), getVersion("s1", "file2", 0), getVersion("s1", "file3", 0),
		getVersion("s1", "file1", 99), getVersion("s1", "missing", 0),
		del("s1", "file1", 3), load("s1", "file1", 0), versions("s1", "file1"),
		save("s1", "file1", genai.NewPartFromBytes([]byte("file v4?"), "text/plain")), // next after the newest left
		del("s1", "file1", 0), load("s1", "file1", 0), versions("s1", "file1"), list("u", "s1"),
		del("s1", "never-saved", 0), del("s1", "never-saved", 7),
		// User-scoped names: one namespace for every session of the user.
		save("s1", "user:prefs", genai.NewPartFromText("dark mode")),
		save("s2", "user:prefs", genai.NewPartFromText("light mode")),
		load("s3", "user:prefs", 1), load("s1", "user:prefs", 0), versions("s9", "user:prefs"),
		list("u", "s1"), list("u", "s3"),
		del("s2", "user:prefs", 2), load("s1", "user:prefs", 0),
		// Large outputs, text and binary, byte for byte; empty inline data.
		save("s1", "big.txt", genai.NewPartFromBytes([]byte(text), "text/plain; charset=utf-8")),
		load("s1", "big.txt", 0),
		save("s1", "big.bin", genai.NewPartFromBytes(binaryBlob(300_001), "application/octet-stream")),
		load("s1", "big.bin", 0),
		save("s1", "big-text-part", genai.NewPartFromText(text)),
		load("s1", "big-text-part", 0),
		save("s1", "empty", &genai.Part{InlineData: &genai.Blob{MIMEType: "application/octet-stream"}}),
		load("s1", "empty", 0),
		// Validation, as the requests' Validate methods decide.
		save("s1", "a/b", genai.NewPartFromText("x")), save("s1", `a\b`, genai.NewPartFromText("x")),
		save("s1", "../up", genai.NewPartFromText("x")), save("", "f", genai.NewPartFromText("x")),
		save("s1", "nopart", nil), save("s1", "emptypart", &genai.Part{}),
		load("s1", "", 0), load("s1", "/etc/passwd", 0), del("s1", "a/b", 0), versions("s1", "a/b"),
		getVersion("s1", "a/b", 0), list("", "s1"), list("u", ""),
		raw("load without app", func(ctx context.Context, s artifact.Service) error {
			_, err := s.Load(ctx, &artifact.LoadRequest{UserID: "u", SessionID: "s", FileName: "f"})
			return err
		}),
	}
}

// result is what an op returned, in a form two services can be compared on.
type result struct {
	Value    any
	NotExist bool
	Err      string // the error text for errors other than not-found
}

func observe(v any, err error) result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return result{NotExist: true}
	case err != nil:
		return result{Err: err.Error()}
	}
	return result{Value: v}
}

// The database service behaves as adk-go's in-memory service on every call of the script.
func TestLongConformsToInMemory(t *testing.T) {
	longrun.Test(t)
	for _, dbk := range databases {
		t.Run(dbk.name, func(t *testing.T) {
			ctx := context.Background()
			mem := artifact.InMemoryService()
			db := newService(t, dbk.open(t), dbartifact.Config{})
			for i, o := range script() {
				want := observe(o.run(ctx, mem))
				got := observe(o.run(ctx, db))
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%d %s (-in-memory +database):\n%.2000s", i, o.name, diff)
				}
			}
		})
	}
}

// Saved outputs survive a restart: a new service on the same file reads them back.
func TestSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	ctx := context.Background()
	data := []byte(bigText())
	first := newService(t, openSQLiteAt(t, path), dbartifact.Config{})
	if _, err := first.Save(ctx, &artifact.SaveRequest{AppName: "app", UserID: "u", SessionID: "s", FileName: "out.txt", Part: genai.NewPartFromBytes(data, "text/plain")}); err != nil {
		t.Fatal(err)
	}
	second := newService(t, openSQLiteAt(t, path), dbartifact.Config{})
	got, err := second.Load(ctx, &artifact.LoadRequest{AppName: "app", UserID: "u", SessionID: "s", FileName: "out.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Part.InlineData.Data, data) {
		t.Errorf("after a restart: %d bytes, want %d", len(got.Part.InlineData.Data), len(data))
	}
}

// A session's recall store reads what Split recorded, a chunk range at a time, lists only the
// session's own outputs, newest first, and saves and deletes the session's artifacts.
func TestChunkStore(t *testing.T) {
	for _, dbk := range databases {
		t.Run(dbk.name, func(t *testing.T) {
			ctx := context.Background()
			svc := newService(t, dbk.open(t), dbartifact.Config{ChunkBytes: 4096})
			data := []byte(bigText()[:100_000])
			put := func(session, name string, data []byte) {
				t.Helper()
				if _, err := svc.Save(ctx, &artifact.SaveRequest{AppName: "app", UserID: "u", SessionID: session, FileName: name, Part: genai.NewPartFromBytes(data, "text/plain")}); err != nil {
					t.Fatal(err)
				}
			}
			put("s1", outputPrefix+"a_1.txt", data)
			put("s1", outputPrefix+"b.txt", []byte("b"))
			put("s1", "adkctx-tool-outputXa.txt", []byte("not the prefix: '_' and '-' are literal"))
			put("s2", outputPrefix+"other-session.txt", []byte("secret"))
			put("s1", "user:"+outputPrefix+"u.txt", []byte("user-scoped"))
			put("s1", outputPrefix+"a_1.txt", data) // version 2, now the newest

			st := svc.(recall.ChunkStore).RecallStore("app", "u", "s1")
			lay, err := st.Layout(ctx, outputPrefix+"a_1.txt")
			if err != nil {
				t.Fatal(err)
			}
			want, chunks := recall.Split(data, 4096)
			want.Version, want.MIMEType, want.Created = 2, "text/plain", lay.Created
			if diff := cmp.Diff(want, lay); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
			got, err := st.ReadChunks(ctx, outputPrefix+"a_1.txt", 2, 3, 2)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(chunks[3:5], got); diff != "" {
				t.Errorf("chunks 3-4 (-want +got):\n%s", diff)
			}
			recent, err := st.Recent(ctx, outputPrefix, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range recent {
				names = append(names, r.Name)
			}
			if diff := cmp.Diff([]string{outputPrefix + "a_1.txt", outputPrefix + "b.txt"}, names); diff != "" {
				t.Errorf("recent outputs (-want +got):\n%s", diff)
			}
			if _, err := st.Layout(ctx, outputPrefix+"other-session.txt"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("another session's output from s1: %v, want not found", err)
			}
			// What recall saves (history segments, excerpts) is the session's artifact, until
			// it deletes it.
			const saved = "adkctx-history-000001.txt"
			v, err := st.Save(ctx, saved, []byte{0xff, 0, '\n'}, "application/octet-stream")
			if err != nil {
				t.Fatal(err)
			}
			lay, err = st.Layout(ctx, saved)
			if err != nil || lay.Version != v || lay.Text || lay.Size != 3 || lay.MIMEType != "application/octet-stream" {
				t.Errorf("saved version %d: layout %+v, %v", v, lay, err)
			}
			if err := st.Delete(ctx, saved, v); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Load(ctx, &artifact.LoadRequest{AppName: "app", UserID: "u", SessionID: "s1", FileName: saved}); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Load after Delete: %v, want not found", err)
			}
		})
	}
}

// Concurrent saves of one name each get a version of their own, none lost.
func TestConcurrentSaves(t *testing.T) {
	for _, dbk := range databases {
		t.Run(dbk.name, func(t *testing.T) {
			ctx := context.Background()
			svc := newService(t, dbk.open(t), dbartifact.Config{})
			const writers = 6
			versions := make(chan int64, writers)
			errs := make(chan error, writers)
			for w := range writers {
				go func() {
					r, err := svc.Save(ctx, &artifact.SaveRequest{AppName: "app", UserID: "u", SessionID: "s", FileName: "f",
						Part: genai.NewPartFromText(fmt.Sprintf("writer %d", w))})
					if err != nil {
						errs <- err
						return
					}
					versions <- r.Version
				}()
			}
			var got []int64
			for range writers {
				select {
				case err := <-errs:
					t.Fatal(err)
				case v := <-versions:
					got = append(got, v)
				}
			}
			resp, err := svc.Versions(ctx, &artifact.VersionsRequest{AppName: "app", UserID: "u", SessionID: "s", FileName: "f"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(resp.Versions, got, cmpopts.SortSlices(func(a, b int64) bool { return a < b })); diff != "" || len(got) != writers {
				t.Errorf("versions saved vs stored (-stored +returned):\n%s", diff)
			}
		})
	}
}

// Concurrent saves of one name each get a version of their own, also when they race: every
// writer reads the newest version before any inserts (a gorm callback holds each read of
// MAX(version) until all have read), so all try the same next version.
func TestConcurrentSavesRacingForOneVersion(t *testing.T) {
	const writers = 6
	db := openSQLite(t)
	var arrived atomic.Int32
	var read sync.WaitGroup
	read.Add(writers)
	if err := db.Callback().Row().After("gorm:row").Register("test:all_read_before_any_insert", func(tx *gorm.DB) {
		if strings.Contains(tx.Statement.SQL.String(), "MAX(version)") && arrived.Add(1) <= writers {
			read.Done()
			read.Wait()
		}
	}); err != nil {
		t.Fatal(err)
	}
	svc := newService(t, db, dbartifact.Config{})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Save(context.Background(), &artifact.SaveRequest{AppName: "app", UserID: "u", SessionID: "s", FileName: "f",
				Part: genai.NewPartFromText(fmt.Sprintf("writer %d", w))})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	resp, err := svc.Versions(context.Background(), &artifact.VersionsRequest{AppName: "app", UserID: "u", SessionID: "s", FileName: "f"})
	if err != nil || len(resp.Versions) != writers {
		t.Errorf("versions stored: %v, %v; want %d", resp, err, writers)
	}
}

// A service whose tables were never migrated says so, by type and in words, on every database:
// Ready before any use, and every call that reaches the database (not the SQL error alone).
// After Migrate, Ready is nil and the calls work.
func TestNotMigratedIsSaid(t *testing.T) {
	ops := []op{
		save("s1", "f", genai.NewPartFromText("x")), load("s1", "f", 0), del("s1", "f", 0),
		list("u", "s1"), versions("s1", "f"), getVersion("s1", "f", 0),
		raw("recent outputs", func(ctx context.Context, s artifact.Service) error {
			_, err := s.(recall.ChunkStore).RecallStore("app", "u", "s1").Recent(ctx, "", 0, 10)
			return err
		}),
	}
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			ctx := t.Context()
			db := d.open(t)
			svc := dbartifact.NewService(db, dbartifact.Config{})
			// Ready is what hooks' Wire asks the service (by interface) before it serves.
			ready := svc.(interface{ Ready(context.Context) error })
			var nm *dbartifact.NotMigratedError
			if err := ready.Ready(ctx); !errors.As(err, &nm) || len(nm.Tables) != 2 || !strings.Contains(err.Error(), "Migrate") {
				t.Errorf("Ready before Migrate: %v, want a *NotMigratedError naming both tables and Migrate", err)
			}
			for _, o := range ops {
				if _, err := o.run(ctx, svc); !errors.As(err, &nm) || nm.Err == nil {
					t.Errorf("%s before Migrate: %v, want a *NotMigratedError wrapping the database's error", o.name, err)
				}
			}
			if err := dbartifact.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			if err := ready.Ready(ctx); err != nil {
				t.Errorf("Ready after Migrate: %v", err)
			}
			for _, o := range ops {
				if _, err := o.run(ctx, svc); errors.As(err, &nm) {
					t.Errorf("%s after Migrate: %v", o.name, err)
				}
			}
		})
	}
}
