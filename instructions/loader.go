package instructions

import (
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/adkctx/adkctx/agentsmd"
)

// Loader discovers and merges the instructions of working directories and
// caches the result per working directory. It is safe for concurrent use.
//
// Every Load re-stats the paths that decided the cached result (the
// candidate names in every directory from the root to the working
// directory, the root markers, the global file and every import; see
// agentsmd.Discovery.Probes) and re-reads the files only when one of them
// appeared, disappeared or changed size, type or modification time. A file
// rewritten with the same size within the file system's mtime granularity is
// not noticed until its next change.
//
// One zap info entry ("instructions: AGENTS.md instructions changed") is
// logged when the merged result of a working directory changes, including
// its first load; nothing is logged on cache hits.
type Loader struct {
	ac          agentsmd.Config
	ic          Config
	log         *zap.Logger
	maxDirs     int
	discoveries atomic.Int64

	mu      sync.Mutex
	entries map[string]*entry // looked up by key only, never iterated for output
	tick    uint64
}

type entry struct {
	used uint64 // guarded by Loader.mu

	mu   sync.Mutex
	d    *agentsmd.Discovery
	m    Merged
	have bool // m holds a previous result (for change detection)
}

// NewLoader validates both configs and returns a Loader. A nil logger
// disables logging; when ac.Logger is nil the discovery warnings go to
// logger too.
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
	ac.RootMarkers = slices.Clone(ac.RootMarkers)
	ac.FallbackNames = slices.Clone(ac.FallbackNames)
	maxDirs := ic.MaxCachedDirs
	if maxDirs == 0 {
		maxDirs = DefaultMaxCachedDirs
	}
	return &Loader{ac: ac, ic: ic, log: logger, maxDirs: maxDirs, entries: map[string]*entry{}}, nil
}

// Load returns the merged instructions for workDir, from the cache when
// nothing changed on disk. Errors come from agentsmd.Discover (an unusable
// working directory); problems with single files are never errors. The
// returned Merged is a copy the caller may modify.
func (l *Loader) Load(workDir string) (Merged, error) {
	key := workDir
	if abs, err := filepath.Abs(workDir); err == nil {
		key = abs
	}
	e := l.entry(key)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.d != nil && !e.d.Stale() {
		return e.m.clone(), nil
	}
	l.discoveries.Add(1)
	d, err := agentsmd.Discover(key, l.ac)
	if err != nil {
		e.d = nil // retry on the next call
		return Merged{}, err
	}
	m := Merge(d, l.ic)
	if !e.have || !m.equal(e.m) {
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
	e.d, e.m, e.have = d, m, true
	return m.clone(), nil
}

// Len reports how many working directories are cached.
func (l *Loader) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Discoveries reports how many times the Loader ran agentsmd.Discover
// (cache misses and re-reads after a change), for tests and metrics.
func (l *Loader) Discoveries() int64 { return l.discoveries.Load() }

// Forget drops the cached result of workDir.
func (l *Loader) Forget(workDir string) {
	key := workDir
	if abs, err := filepath.Abs(workDir); err == nil {
		key = abs
	}
	l.mu.Lock()
	delete(l.entries, key)
	l.mu.Unlock()
}

func (l *Loader) entry(key string) *entry {
	l.mu.Lock()
	defer l.mu.Unlock()
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
