package discover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/adkctx/adkctx/agentsmd"
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
	Scope agentsmd.Scope
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

// Stats counts the file system work one Discover call did.
type Stats struct {
	// StatCalls counts Lstat/Stat calls of the probes (see Discovery.Stale).
	StatCalls int
	// ResolveCalls counts filepath.EvalSymlinks calls: only for a global
	// file that is a symlink (project files are opened through os.Root).
	ResolveCalls int
	// FilesOpened counts files opened; directories are never listed, so
	// this is at most one per candidate that exists on the path, plus the
	// imports.
	FilesOpened int
	// BytesRead counts bytes read from files: at most MaxFileBytes+1 per
	// file and 4 × (TextBudget + MaxFileBytes + 1) in all.
	BytesRead int64
}

// probe is the observed state of one path that decided the result; Stale
// re-stats every probe to find out whether the result may have changed.
type probe struct {
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
	Skipped []agentsmd.Skip
	// Stats counts the file system work done.
	Stats Stats
	// probes are the paths whose state decided this result (root markers
	// between WorkDir and Root, every candidate name in every directory on
	// the path, the global file, every import target).
	probes []probe
}

// errNotDirectory is wrapped by a WorkDirError when the working directory is
// not a directory.
var errNotDirectory = errors.New("not a directory")

// Discover finds, reads and expands the instruction files for workDir.
// Problems with individual files are never errors: they are logged as
// warnings and listed in Discovery.Skipped. Errors are returned only for an
// invalid Config (*adkctx.ConfigError values) or an unusable workDir (*WorkDirError).
func Discover(workDir string, cfg agentsmd.Config) (*Discovery, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	if workDir == "" {
		return nil, &agentsmd.WorkDirError{WorkDir: workDir, Err: errors.New("empty path")}
	}
	abs, err := filepath.Abs(workDir)
	if err != nil {
		return nil, &agentsmd.WorkDirError{WorkDir: workDir, Err: err}
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, &agentsmd.WorkDirError{WorkDir: workDir, Err: err}
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, &agentsmd.WorkDirError{WorkDir: workDir, Err: err}
	}
	if !fi.IsDir() {
		return nil, &agentsmd.WorkDirError{WorkDir: workDir, Err: errNotDirectory}
	}
	return discover(resolved, cfg, openNoWait), nil
}

// discover runs the discovery below an existing, resolved working directory.
//
// Files are read from the working directory up to the root, then the
// global file, so that the text budget goes to the most specific files
// first (as instructions.Merge keeps them first); the result lists them
// the other way round, global first, with their skips in that order too.
func discover(workDir string, cfg agentsmd.Config, open openFunc) *Discovery {
	s := &scanner{cfg: cfg, d: &Discovery{WorkDir: workDir}, seen: map[string]bool{}, open: open, readLimit: readLimit(cfg)}
	s.findRoot()
	dirs := s.dirsRootToLeaf()
	slots := make([]slot, 1+len(dirs)) // the global file, then root → leaf
	if project, err := openTree(s.d.Root, "project root"); err != nil {
		s.skip(s.d.Root, "cannot open the project root: "+errText(err))
		slots[1].skips = s.takeSkips()
	} else {
		for i := len(dirs) - 1; i >= 0; i-- {
			slots[1+i] = s.directory(project, dirs[i])
		}
		project.root.Close()
	}
	if !cfg.NoGlobal {
		slots[0] = s.global()
	}
	for _, sl := range slots {
		for _, sk := range sl.skips {
			s.d.Skipped = append(s.d.Skipped, sk)
			s.cfg.Logger.Warn("agentsmd: skipped instruction file", zap.String("path", sk.Path), zap.String("reason", sk.Reason))
		}
		if sl.file != nil {
			s.d.Files = append(s.d.Files, *sl.file)
		}
	}
	return s.d
}

// Stale re-stats every probe and reports whether any changed (existence,
// type, size or modification time). It is cheap: no file is opened.
func (d *Discovery) Stale() bool {
	for _, p := range d.probes {
		now, _ := statProbe(p.Path)
		if now.Exists != p.Exists || now.Mode != p.Mode || now.Size != p.Size || !now.ModTime.Equal(p.ModTime) {
			return true
		}
	}
	return false
}

// statProbe Lstats path, following a symlink with Stat so that edits of
// the target are seen. The FileInfo is the Lstat result (nil if absent).
// Size and ModTime are recorded for non-directories only. probes only
// detect changes; whatever they see, files are opened through os.Root.
func statProbe(path string) (probe, fs.FileInfo) {
	li, err := os.Lstat(path)
	if err != nil {
		return probe{Path: path}, nil
	}
	info := li
	if li.Mode()&fs.ModeSymlink != 0 {
		if ti, err := os.Stat(path); err == nil {
			info = ti
		}
	}
	pr := probe{Path: path, Exists: true, Mode: info.Mode()}
	if !info.IsDir() {
		// A directory (a .git marker, say) changes its mtime whenever git
		// touches an entry; only its existence and type matter here.
		pr.Size, pr.ModTime = info.Size(), info.ModTime()
	}
	return pr, li
}

type scanner struct {
	cfg       agentsmd.Config
	d         *Discovery
	seen      map[string]bool // probed paths (dedupe only; never iterated)
	open      openFunc
	readLimit int64
	// included are the identities of every file whose text was used.
	included []includedFile
	// textUsed is the text (trailing whitespace excluded) of the files
	// already used; they are more specific than the one being read.
	textUsed int64
	// pending are the skips of the source being read, until it is done.
	pending []agentsmd.Skip
}

// slot is the outcome for one source (the global file or one directory).
type slot struct {
	file  *File
	skips []agentsmd.Skip
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
		s.d.probes = append(s.d.probes, pr)
	}
	return li
}

// skip records a refused file or import for the source being read; it is
// logged when the Discovery is assembled, in output order.
func (s *scanner) skip(path, reason string) {
	s.pending = append(s.pending, agentsmd.Skip{Path: path, Reason: reason})
}

func (s *scanner) takeSkips() []agentsmd.Skip {
	sk := s.pending
	s.pending = nil
	return sk
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
	slices.Reverse(dirs)
	return dirs
}

// budgetFull reports that the files already used fill the text budget, so
// that a less specific file could not be used.
func (s *scanner) budgetFull() bool { return s.textUsed >= s.cfg.TextBudget }

func (s *scanner) budgetFullReason() string {
	return fmt.Sprintf("not read: the more specific files already fill the text budget of %d bytes", s.cfg.TextBudget)
}

func (s *scanner) global() slot {
	g := s.cfg.GlobalFile
	if g == "" {
		cd, err := os.UserConfigDir()
		if err != nil {
			s.cfg.Logger.Debug("agentsmd: no user config directory; global file disabled", zap.Error(err))
			return slot{}
		}
		g = filepath.Join(cd, globalSubdir, defaultName)
	}
	g, err := filepath.Abs(g)
	if err != nil {
		s.skip(s.cfg.GlobalFile, "invalid global file path: "+err.Error())
		return slot{skips: s.takeSkips()}
	}
	s.d.GlobalFile = g
	li := s.probe(g)
	if li == nil {
		return slot{}
	}
	if s.budgetFull() {
		s.skip(g, s.budgetFullReason())
		return slot{skips: s.takeSkips()}
	}
	// The global file is the user's own: it may itself be a symlink to
	// anywhere (dotfiles), so it is opened on its own (never blocking, and
	// only a regular file is read). Its imports are opened below its
	// directory: the link's, or the target's.
	rd, reason := s.readFile(nil, g, li, s.newFile)
	if reason != "" {
		s.skip(g, reason)
		return slot{skips: s.takeSkips()}
	}
	dirs := []string{filepath.Dir(g)}
	if li.Mode()&fs.ModeSymlink != 0 {
		s.d.Stats.ResolveCalls++
		if target, err := filepath.EvalSymlinks(g); err == nil && filepath.Dir(target) != dirs[0] {
			dirs = append(dirs, filepath.Dir(target))
		}
	}
	const what = "global directory"
	var trees []*tree
	for _, dir := range dirs {
		t, err := openTree(dir, what)
		if err != nil {
			s.cfg.Logger.Debug("agentsmd: cannot open the global file's directory", zap.String("path", dir), zap.Error(err))
			continue
		}
		defer t.root.Close()
		trees = append(trees, t)
	}
	f, ok := s.use(rd, g, trees, what)
	if !ok {
		return slot{skips: s.takeSkips()}
	}
	f.Scope = agentsmd.ScopeGlobal
	f.RelPath = displayGlobal(g)
	return slot{file: f, skips: s.takeSkips()}
}

func displayGlobal(g string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, g); err == nil && filepath.IsLocal(rel) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(g)
}

func (s *scanner) directory(project *tree, dir string) slot {
	for _, name := range candidateNames(s.cfg) {
		p := filepath.Join(dir, name)
		li := s.probe(p)
		if li == nil {
			continue
		}
		if s.budgetFull() {
			s.skip(p, s.budgetFullReason())
			break
		}
		rd, reason := s.readFile(project, p, li, s.newFile)
		if reason != "" {
			s.skip(p, reason)
			continue // the next candidate name gets its chance
		}
		f, ok := s.use(rd, p, []*tree{project}, project.what)
		if !ok {
			continue
		}
		f.Scope = agentsmd.ScopeProject
		f.RelPath = filepath.ToSlash(project.rel(p))
		return slot{file: f, skips: s.takeSkips()}
	}
	return slot{skips: s.takeSkips()}
}

// use turns a read top-level file into a File, with its imports expanded
// below trees (what names them in reasons).
func (s *scanner) use(rd readResult, p string, trees []*tree, what string) (*File, bool) {
	if strings.TrimSpace(rd.text) == "" {
		s.skip(p, "empty or whitespace-only file")
		return nil, false
	}
	f := &File{Path: p, Size: rd.info.Size(), ModTime: rd.info.ModTime(), Notes: rd.notes, Truncated: rd.truncated}
	s.included = append(s.included, includedFile{info: rd.info, path: p})
	x := &expansion{file: f, trees: trees, what: what, room: s.cfg.TextBudget - s.textUsed}
	f.Content = s.expandTop(x, rd.text, p, rd.info)
	if x.unread > 0 {
		reason := fmt.Sprintf("%d import(s) not read: the text already fills the text budget of %d bytes", x.unread, s.cfg.TextBudget)
		f.Notes = append(f.Notes, reason)
		s.skip(p, reason)
	}
	s.textUsed += int64(len(strings.TrimRight(f.Content, " \t\r\n")))
	return f, true
}

// newFile refuses a file whose text is already used (identity by
// os.SameFile), before it is read.
func (s *scanner) newFile(info fs.FileInfo) string {
	if prev := s.duplicateOf(info); prev != "" {
		return "same file as " + prev + ", already included"
	}
	return ""
}

func (s *scanner) duplicateOf(info fs.FileInfo) string {
	for _, inc := range s.included {
		if os.SameFile(inc.info, info) {
			return inc.path
		}
	}
	return ""
}
