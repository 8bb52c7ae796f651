package agentsmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Scopes of a File.
const (
	ScopeGlobal  = "global"  // the user-wide file (Config.GlobalFile)
	ScopeProject = "project" // a file in a directory from the project root to the working directory
)

// File is one instruction file that contributes text.
type File struct {
	// Path is the absolute (symlink-resolved directory) path of the file.
	Path string
	// RelPath is Path relative to the project root, slash-separated (e.g.
	// "AGENTS.md", "svc/api/AGENTS.md"); for the global file it is
	// "~/..." when under the home directory, else the absolute path.
	RelPath string
	// Scope is ScopeGlobal or ScopeProject.
	Scope string
	// Content is the file's text: valid UTF-8, @imports expanded, visible
	// notes for truncation and failed imports included.
	Content string
	// Size and ModTime are the file's size and modification time on disk.
	Size    int64
	ModTime time.Time
	// Notes describe what was changed while reading (truncation, invalid
	// UTF-8 replaced, imports expanded or refused).
	Notes []string
	// Imports are the absolute paths of the files imported (recursively)
	// into Content, in order.
	Imports []string
	// Truncated reports that this file or one of its imports was over
	// Config.MaxFileBytes and was cut.
	Truncated bool
}

// Skip is a file or import that was not used, with the reason.
type Skip struct {
	Path, Reason string
}

// Stats counts the file system work one Discover call did.
type Stats struct {
	// StatCalls counts Lstat/Stat calls (EvalSymlinks internals excluded).
	StatCalls int
	// ResolveCalls counts filepath.EvalSymlinks calls (only for files that exist).
	ResolveCalls int
	// FilesOpened counts files opened for reading; directories are never
	// listed, so this is at most one per candidate that exists on the path.
	FilesOpened int
	// BytesRead counts bytes read from files (bounded by MaxFileBytes+1 per file).
	BytesRead int64
}

// Probe is the observed state of one path that decided the result; Stale
// re-stats every probe to find out whether the result may have changed.
type Probe struct {
	Path    string
	Exists  bool
	Mode    fs.FileMode
	Size    int64
	ModTime time.Time
}

// Discovery is the result of Discover.
type Discovery struct {
	// Root is the project root: the nearest ancestor (or the working
	// directory itself) holding a root marker; the working directory when
	// no marker was found (RootMarker is then "").
	Root string
	// RootMarker is the marker name found in Root, "" if none.
	RootMarker string
	// WorkDir is the absolute, symlink-resolved working directory.
	WorkDir string
	// GlobalFile is the global file path that was considered ("" if none).
	GlobalFile string
	// Files are ordered global first, then root → … → working directory.
	Files []File
	// Skipped lists every refused file or import, in discovery order.
	Skipped []Skip
	// Stats counts the file system work done.
	Stats Stats
	// Probes are the paths whose state decided this result (root markers
	// between WorkDir and Root, every candidate name in every directory on
	// the path, the global file, every import target).
	Probes []Probe
}

// WorkDirError reports an unusable working directory.
type WorkDirError struct {
	WorkDir string
	Err     error
}

func (e *WorkDirError) Error() string {
	return fmt.Sprintf("agentsmd: working directory %q: %v", e.WorkDir, e.Err)
}

func (e *WorkDirError) Unwrap() error { return e.Err }

// Error is the type of this package's sentinel errors (constants).
type Error string

func (e Error) Error() string { return string(e) }

// ErrNotDirectory is wrapped by a WorkDirError when the working directory is
// not a directory.
const ErrNotDirectory = Error("not a directory")

// Discover finds, reads and expands the instruction files for workDir.
// Problems with individual files are never errors: they are logged as
// warnings and listed in Discovery.Skipped. Errors are returned only for an
// invalid Config (*ConfigError) or an unusable workDir (*WorkDirError).
func Discover(workDir string, cfg Config) (*Discovery, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if workDir == "" {
		return nil, &WorkDirError{WorkDir: workDir, Err: errors.New("empty path")}
	}
	abs, err := filepath.Abs(workDir)
	if err != nil {
		return nil, &WorkDirError{WorkDir: workDir, Err: err}
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, &WorkDirError{WorkDir: workDir, Err: err}
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, &WorkDirError{WorkDir: workDir, Err: err}
	}
	if !fi.IsDir() {
		return nil, &WorkDirError{WorkDir: workDir, Err: ErrNotDirectory}
	}
	return discover(resolved, cfg, osOpen), nil
}

// discover runs the discovery below an existing, resolved working directory.
func discover(workDir string, cfg Config, open func(string) (openedFile, error)) *Discovery {
	s := &scanner{cfg: cfg, d: &Discovery{WorkDir: workDir}, seen: map[string]bool{}, open: open}
	s.findRoot()
	if !cfg.NoGlobal {
		s.global()
	}
	for _, dir := range s.dirsRootToLeaf() {
		s.directory(dir)
	}
	return s.d
}

// Stale re-stats every probe and reports whether any changed (existence,
// type, size or modification time). It is cheap: no file is opened.
func (d *Discovery) Stale() bool {
	for _, p := range d.Probes {
		now, _ := statProbe(p.Path)
		if now.Exists != p.Exists || now.Mode != p.Mode || now.Size != p.Size || !now.ModTime.Equal(p.ModTime) {
			return true
		}
	}
	return false
}

// statProbe Lstats path, following a symlink with Stat so that edits of
// the target are seen. The FileInfo is the Lstat result (nil if absent).
// Size and ModTime are recorded for non-directories only.
func statProbe(path string) (Probe, fs.FileInfo) {
	li, err := os.Lstat(path)
	if err != nil {
		return Probe{Path: path}, nil
	}
	info := li
	if li.Mode()&fs.ModeSymlink != 0 {
		if ti, err := os.Stat(path); err == nil {
			info = ti
		}
	}
	pr := Probe{Path: path, Exists: true, Mode: info.Mode()}
	if !info.IsDir() {
		// A directory (a .git marker, say) changes its mtime whenever git
		// touches an entry; only its existence and type matter here.
		pr.Size, pr.ModTime = info.Size(), info.ModTime()
	}
	return pr, li
}

type scanner struct {
	cfg  Config
	d    *Discovery
	seen map[string]bool // probed paths (dedupe only; never iterated)
	open func(string) (openedFile, error)
	// included are the identities of every file whose text was used.
	included []includedFile
}

type includedFile struct {
	info fs.FileInfo
	path string
}

func (s *scanner) probe(path string) fs.FileInfo {
	pr, li := statProbe(path)
	s.d.Stats.StatCalls++
	if li != nil && li.Mode()&fs.ModeSymlink != 0 {
		s.d.Stats.StatCalls++
	}
	if !s.seen[path] {
		s.seen[path] = true
		s.d.Probes = append(s.d.Probes, pr)
	}
	return li
}

func (s *scanner) skip(path, reason string) {
	s.d.Skipped = append(s.d.Skipped, Skip{Path: path, Reason: reason})
	s.cfg.Logger.Warn("agentsmd: skipped instruction file", zap.String("path", path), zap.String("reason", reason))
}

func (s *scanner) findRoot() {
	s.d.Root = s.d.WorkDir
	for dir := s.d.WorkDir; ; {
		for _, m := range s.cfg.RootMarkers {
			if s.probe(filepath.Join(dir, m)) != nil {
				s.d.Root, s.d.RootMarker = dir, m
				return
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return
		}
		dir = parent
	}
}

func (s *scanner) dirsRootToLeaf() []string {
	var dirs []string
	for dir := s.d.WorkDir; ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == s.d.Root || filepath.Dir(dir) == dir {
			break
		}
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

func (s *scanner) global() {
	g := s.cfg.GlobalFile
	if g == "" {
		cd, err := os.UserConfigDir()
		if err != nil {
			s.cfg.Logger.Debug("agentsmd: no user config directory; global file disabled", zap.Error(err))
			return
		}
		g = filepath.Join(cd, GlobalSubdir, DefaultName)
	}
	g, err := filepath.Abs(g)
	if err != nil {
		s.skip(s.cfg.GlobalFile, "invalid global file path: "+err.Error())
		return
	}
	s.d.GlobalFile = g
	li := s.probe(g)
	if li == nil {
		return
	}
	// The global file is the user's own: it may itself be a symlink to
	// anywhere (dotfiles); its imports must stay in its directory (the
	// link's or the target's).
	lexDir := filepath.Dir(g)
	realDir := lexDir
	if target, err := filepath.EvalSymlinks(g); err == nil {
		realDir = filepath.Dir(target)
	}
	f, ok := s.readTop(g, li, root{lex: lexDir, real: realDir, what: "global directory"})
	if !ok {
		return
	}
	f.Scope = ScopeGlobal
	f.RelPath = displayGlobal(g)
	s.d.Files = append(s.d.Files, f)
}

func displayGlobal(g string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, g); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(g)
}

func (s *scanner) directory(dir string) {
	r := root{lex: s.d.Root, real: s.d.Root, what: "project root"}
	for _, name := range s.cfg.candidateNames() {
		p := filepath.Join(dir, name)
		li := s.probe(p)
		if li == nil {
			continue
		}
		f, ok := s.readTop(p, li, r)
		if !ok {
			continue // the next candidate name gets its chance
		}
		f.Scope = ScopeProject
		rel, err := filepath.Rel(s.d.Root, p)
		if err != nil {
			rel = p
		}
		f.RelPath = filepath.ToSlash(rel)
		s.d.Files = append(s.d.Files, f)
		return
	}
}

// readTop reads one top-level file and expands its imports.
func (s *scanner) readTop(p string, li fs.FileInfo, r root) (File, bool) {
	rd, reason := s.readSafe(p, li, r)
	if reason != "" {
		s.skip(p, reason)
		return File{}, false
	}
	if prev := s.duplicateOf(rd.info); prev != "" {
		s.skip(p, "same file as "+prev+", already included")
		return File{}, false
	}
	if strings.TrimSpace(rd.text) == "" {
		s.skip(p, "empty or whitespace-only file")
		return File{}, false
	}
	f := File{Path: p, Size: rd.info.Size(), ModTime: rd.info.ModTime(), Notes: rd.notes, Truncated: rd.truncated}
	s.included = append(s.included, includedFile{info: rd.info, path: p})
	f.Content = s.expand(rd.text, p, 0, r, []fs.FileInfo{rd.info}, &f)
	return f, true
}

func (s *scanner) duplicateOf(info fs.FileInfo) string {
	for _, inc := range s.included {
		if os.SameFile(inc.info, info) {
			return inc.path
		}
	}
	return ""
}

// root is an allowed tree: files must resolve inside it.
type root struct {
	lex, real string
	what      string // "project root" or "global directory"
}

func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}
