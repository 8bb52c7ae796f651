package instructions

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/instructions/internal/discover"
)

// Loader discovers and merges the instructions of working directories and
// caches the result per working directory. It is safe for concurrent use.
//
// Every Load re-stats the paths that decided the cached result (the
// candidate names in every directory from the root to the working
// directory, the root markers, the global file and every import) and
// re-reads the files only when one of them
// appeared, disappeared or changed size, type or modification time. A file
// rewritten with the same size within the file system's mtime granularity is
// not noticed until its next change.
//
// No lock is held while the file system is used. The re-stat runs in the
// calling goroutine (a file system that hangs even on stat holds the caller
// too). A discovery (the opens and reads) runs in a goroutine
// of its own: Loads of the same directory that arrive meanwhile wait for
// that discovery rather than start another, and Loads of other directories
// never wait for it. Load gives up when its context is done; the
// discovery goes on and fills the cache for later Loads. A discovery that
// never returns (a hung network file system) keeps its goroutine, and every
// later Load of that directory waits for it until its context is done.
// Special files never make a discovery wait (see package agentsmd).
//
// One zap info entry ("instructions: AGENTS.md instructions changed") is
// logged when the merged result of a working directory changes, and on its
// first load when it found (or skipped) a file; nothing is logged on cache
// hits or for a directory without AGENTS.md files.
type Loader struct {
	ac          agentsmd.Config
	ic          Config
	log         *zap.Logger
	maxDirs     int
	discoveries atomic.Int64
	// discover is discover.Discover; tests substitute a slow one.
	discover func(string, agentsmd.Config) (*discover.Discovery, error)

	mu      sync.Mutex
	entries map[string]*entry // looked up by key only, never iterated for output
	tick    uint64
}

// entry is the cached state of one working directory, guarded by Loader.mu.
// A Discovery is never changed once made, so d may be used without the lock.
type entry struct {
	used   uint64
	d      *discover.Discovery // nil: nothing cached yet, or the last discovery failed
	m      Merged
	have   bool    // m holds a previous result (for change detection)
	flight *flight // the discovery in progress, nil if none
}

// flight is one discovery of a working directory, shared by the Loads that
// arrive while it runs.
type flight struct {
	done chan struct{} // closed once m and err are set
	m    Merged
	err  error
}

// NewLoader validates both configs and returns a Loader. A nil logger
// disables logging; when ac.Logger is nil the discovery warnings go to
// logger too. When ac.TextBudget is zero it is set to ic.MaxBytes: no file
// or import is read beyond what the merged text can hold.
func NewLoader(ac agentsmd.Config, ic Config, logger *zap.Logger) (*Loader, error) {
	if err := ac.Validate(); err != nil {
		return nil, err
	}
	if err := ic.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	if ac.Logger == nil {
		ac.Logger = logger
	}
	if ac.TextBudget == 0 {
		ac.TextBudget = int64(ic.maxBytes())
	}
	ac.RootMarkers = slices.Clone(ac.RootMarkers)
	ac.FallbackNames = slices.Clone(ac.FallbackNames)
	maxDirs := ic.MaxCachedDirs
	if maxDirs == 0 {
		maxDirs = defaultMaxCachedDirs
	}
	return &Loader{ac: ac, ic: ic, log: logger, maxDirs: maxDirs, discover: discover.Discover, entries: map[string]*entry{}}, nil
}

// Load returns the merged instructions for workDir, from the cache
// when nothing changed on disk. Errors are an unusable working directory
// (*agentsmd.WorkDirError) or come from ctx: when ctx is done before the
// discovery of workDir is, Load returns an error wrapping ctx's
// error. Problems with single files are never errors. The returned Merged
// is a copy the caller may modify.
func (l *Loader) Load(ctx context.Context, workDir string) (Merged, error) {
	key := cacheKey(workDir)
	if err := ctx.Err(); err != nil {
		return Merged{}, fmt.Errorf("instructions: loading %s: %w", key, err)
	}
	for {
		l.mu.Lock()
		e := l.entry(key)
		c, d, m := e.flight, e.d, e.m
		l.mu.Unlock()
		// The re-stat of a cached result is cheap and runs here, without a
		// lock and without a goroutine; only a discovery (opens and reads)
		// runs apart and is shared.
		if c == nil && d != nil && !d.Stale() {
			return m.clone(), nil
		}
		if c == nil {
			l.mu.Lock()
			if e.flight == nil && e.d == d && l.entries[key] == e {
				c = &flight{done: make(chan struct{})}
				e.flight = c
				go l.run(key, e, c, e.m, e.have)
			}
			l.mu.Unlock()
			if c == nil {
				continue // another Load changed the entry meanwhile: look again
			}
		}
		return l.wait(ctx, key, c)
	}
}

// wait returns the result of c, or an error once ctx is done.
func (l *Loader) wait(ctx context.Context, key string, c *flight) (Merged, error) {
	select {
	case <-c.done:
		if c.err != nil {
			return Merged{}, c.err
		}
		return c.m.clone(), nil
	case <-ctx.Done():
		return Merged{}, fmt.Errorf("instructions: gave up waiting for the AGENTS.md files of %s: %w", key, ctx.Err())
	}
}

// run discovers key, stores the result in e unless e was evicted or
// forgotten meanwhile, and lands c. prev and have are e's previous
// result, for change detection.
func (l *Loader) run(key string, e *entry, c *flight, prev Merged, have bool) {
	d, m, err := l.rediscover(key, prev, have)
	l.mu.Lock()
	if e.flight == c {
		e.flight = nil
	}
	if l.entries[key] == e {
		if err != nil {
			e.d = nil // retry on the next call
		} else {
			e.d, e.m, e.have = d, m, true
		}
	}
	l.mu.Unlock()
	c.m, c.err = m, err
	close(c.done)
}

// rediscover returns a new discovery of key and its merged text, logged
// when it differs from prev.
func (l *Loader) rediscover(key string, prev Merged, have bool) (d *discover.Discovery, m Merged, err error) {
	// A panic here would kill the process from a goroutine nobody can
	// recover in; it becomes this discovery's error instead.
	defer func() {
		if p := recover(); p != nil {
			// The panic's value may quote a file's content: its type only.
			l.log.Error("instructions: AGENTS.md discovery panicked", zap.String("work_dir", key), zap.String("panic_type", fmt.Sprintf("%T", p)), zap.StackSkip("stack", 1))
			err = fmt.Errorf("instructions: AGENTS.md discovery of %s panicked (%T)", key, p)
		}
	}()
	l.discoveries.Add(1)
	d, err = l.discover(key, l.ac)
	if err != nil {
		return nil, Merged{}, err
	}
	m = merge(d, l.ic)
	if have && !m.equal(prev) || !have && (len(m.Sources) > 0 || len(m.Skipped) > 0) {
		files := make([]string, len(m.Sources))
		for i, s := range m.Sources {
			files[i] = s.AbsPath
		}
		skipped := make([]string, len(m.Skipped))
		for i, s := range m.Skipped {
			skipped[i] = s.Path
		}
		l.log.Info("instructions: AGENTS.md instructions changed",
			zap.String("work_dir", key),
			zap.String("root", d.Root),
			zap.Strings("files", files),
			zap.Int("bytes", m.Bytes),
			zap.Bool("truncated", m.Truncated),
			zap.Int("skipped", len(m.Skipped)),
			zap.Strings("skipped_paths", skipped),
		)
	}
	return d, m, nil
}

func cacheKey(workDir string) string {
	if abs, err := filepath.Abs(workDir); err == nil {
		return abs
	}
	return workDir
}

// Len reports how many working directories are cached.
func (l *Loader) cachedDirs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Forget drops the cached result of workDir. A discovery of workDir in
// progress still answers the Loads waiting for it, but is not cached.
func (l *Loader) forget(workDir string) {
	key := cacheKey(workDir)
	l.mu.Lock()
	delete(l.entries, key)
	l.mu.Unlock()
}

// entry returns the entry of key, made (evicting the least recently used
// one) when missing. l.mu must be held.
func (l *Loader) entry(key string) *entry {
	l.tick++
	if e, ok := l.entries[key]; ok {
		e.used = l.tick
		return e
	}
	if len(l.entries) >= l.maxDirs {
		var oldKey string
		var oldUsed uint64
		first := true
		for k, e := range l.entries { // pick the least recently used; order-independent
			if first || e.used < oldUsed || (e.used == oldUsed && k < oldKey) {
				oldKey, oldUsed, first = k, e.used, false
			}
		}
		delete(l.entries, oldKey)
	}
	e := &entry{used: l.tick}
	l.entries[key] = e
	return e
}

func (m Merged) clone() Merged {
	c := m
	c.Skipped = slices.Clone(m.Skipped)
	if m.Sources != nil {
		c.Sources = make([]Source, len(m.Sources))
		for i, s := range m.Sources {
			s.Imports = slices.Clone(s.Imports)
			c.Sources[i] = s
		}
	}
	return c
}

func (m Merged) equal(o Merged) bool {
	if m.Text != o.Text || m.Root != o.Root || m.Truncated != o.Truncated ||
		!slices.Equal(m.Skipped, o.Skipped) || len(m.Sources) != len(o.Sources) {
		return false
	}
	for i := range m.Sources {
		a, b := m.Sources[i], o.Sources[i]
		if a.AbsPath != b.AbsPath || a.Bytes != b.Bytes || a.KeptBytes != b.KeptBytes ||
			a.Truncated != b.Truncated || !slices.Equal(a.Imports, b.Imports) {
			return false
		}
	}
	return true
}
