package discover

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// openedFile is what readFile needs from an open file (an *os.File; tests
// substitute failing files).
type openedFile interface {
	io.Reader
	Stat() (fs.FileInfo, error)
	Close() error
}

// openFunc opens name for reading with openFlags: below t when t is not
// nil (name is then relative to t's directory), else name is absolute.
type openFunc func(t *tree, name string) (openedFile, error)

func openNoWait(t *tree, name string) (openedFile, error) {
	if t == nil {
		return os.OpenFile(name, openFlags, 0)
	}
	return t.root.OpenFile(name, openFlags, 0)
}

// tree is a directory that files are opened below. Every open goes
// through an os.Root, which resolves each path component (and symlink)
// itself and refuses any that leads outside: there is no window between a
// check and the open for a swapped symlink to slip through.
type tree struct {
	root *os.Root
	dir  string // the absolute path root was opened at
	what string // "project root" or "global directory", for reasons
	// escape is the error os.Root reports for a path that leads outside it;
	// os does not export it (golang.org/issue/74640).
	escape error
}

func openTree(dir, what string) (*tree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	t := &tree{root: r, dir: dir, what: what}
	// ".." is outside any root: opening it returns the escape error without
	// touching the file system.
	if f, err := r.Open(".."); err != nil {
		t.escape = errors.Unwrap(err)
	} else {
		f.Close()
	}
	return t, nil
}

// escapes reports whether err is os.Root's refusal of a path leading out.
func (t *tree) escapes(err error) bool { return t.escape != nil && errors.Is(err, t.escape) }

// rel returns path relative to t's directory, "" when it does not lie
// inside (lexically; os.Root enforces the rest when the file is opened).
func (t *tree) rel(path string) string {
	rel, err := filepath.Rel(t.dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	return rel
}

type readResult struct {
	text      string
	info      fs.FileInfo // Stat of the opened file (identity for SameFile)
	notes     []string
	truncated bool
}

// readFile opens and reads path under the safety rules: below t (nil: the
// global file, opened on its own), never waiting on a special file, only a
// regular file according to the opened handle, at most MaxFileBytes+1
// bytes, nothing once the discovery's read limit is used up. li is the
// probe's Lstat of path; accept may refuse the opened file by its identity
// before anything is read. A non-empty reason means the file is refused.
func (s *scanner) readFile(t *tree, path string, li fs.FileInfo, accept func(fs.FileInfo) string) (readResult, string) {
	if li.Mode()&fs.ModeSymlink == 0 && !li.Mode().IsRegular() {
		return readResult{}, notRegular(li.Mode()) // not opened at all
	}
	limit := s.cfg.MaxFileBytes + 1
	if s.d.Stats.BytesRead+limit > s.readLimit {
		return readResult{}, fmt.Sprintf("not read: the read limit of %d bytes per discovery is used up", s.readLimit)
	}
	name := path
	if t != nil {
		name = t.rel(path)
		if name == "" {
			return readResult{}, "outside the " + t.what
		}
	}
	f, err := s.openBelow(t, name, li)
	if err != nil {
		return readResult{}, openFailure(t, li, err)
	}
	defer f.Close()
	s.d.Stats.FilesOpened++
	// What counts is the file that was opened, whatever the path names now.
	fi, err := f.Stat()
	if err != nil {
		return readResult{}, "unreadable: stat: " + errText(err)
	}
	if !fi.Mode().IsRegular() {
		return readResult{}, notRegular(fi.Mode())
	}
	if reason := accept(fi); reason != "" {
		return readResult{}, reason
	}
	data, err := readCapped(f, fi.Size(), limit)
	s.d.Stats.BytesRead += int64(len(data))
	if err != nil {
		return readResult{}, "unreadable: read: " + errText(err)
	}
	sniff := data[:min(len(data), binarySniffBytes)]
	if bytes.IndexByte(sniff, 0) >= 0 {
		return readResult{}, "binary file (NUL byte in the first 8 KiB)"
	}
	res := readResult{info: fi}
	if fileCap := s.cfg.MaxFileBytes; int64(len(data)) > fileCap {
		data = data[:cutRuneBoundary(data, int(fileCap))]
		res.truncated = true
		note := fmt.Sprintf("truncated: kept the first %d bytes of %d (per-file cap %d bytes)", len(data), fi.Size(), fileCap)
		res.notes = append(res.notes, note)
		data = append(data, fmt.Sprintf("\n[agentsmd: file %s %s]\n", filepath.Base(path), note)...)
	}
	text := string(data)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		res.notes = append(res.notes, "invalid UTF-8 replaced with U+FFFD")
	}
	res.text = text
	return res, ""
}

func notRegular(m fs.FileMode) string {
	return "not a regular file (" + m.Type().String() + ")"
}

// openBelow opens name below t (t nil: name is absolute). os.Root refuses
// absolute symlinks; a file that is one, pointing inside t, is opened by
// the root-relative name of its target instead, still through the root.
func (s *scanner) openBelow(t *tree, name string, li fs.FileInfo) (openedFile, error) {
	f, err := s.open(t, name)
	if err == nil || t == nil || li.Mode()&fs.ModeSymlink == 0 || !t.escapes(err) {
		return f, err
	}
	if target, rerr := t.root.Readlink(name); rerr == nil && filepath.IsAbs(target) {
		if rel := t.rel(filepath.Clean(target)); rel != "" {
			return s.open(t, rel)
		}
	}
	return nil, err
}

// openFailure explains why a file could not be opened below t (nil: the
// global file).
func openFailure(t *tree, li fs.FileInfo, err error) string {
	symlink := li.Mode()&fs.ModeSymlink != 0
	switch {
	case t != nil && t.escapes(err):
		if symlink {
			return "symlink resolves outside the " + t.what
		}
		return "resolves outside the " + t.what + " through a symlinked directory"
	case symlink && errors.Is(err, fs.ErrNotExist):
		return "broken symlink"
	}
	return "unreadable: open: " + errText(err)
}

// readCapped reads at most limit bytes from r. size (from fstat) sizes the
// buffer, so that a file is read with one allocation; a file that grew
// since is still read up to limit.
func readCapped(r io.Reader, size, limit int64) ([]byte, error) {
	n := limit
	if size >= 0 && size < limit {
		n = size + 1 // room to see EOF without growing
	}
	buf := make([]byte, 0, n)
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(int64(cap(buf)), limit-int64(len(buf)))))
		}
		m, err := r.Read(buf[len(buf):int(min(int64(cap(buf)), limit))])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// cutRuneBoundary returns n, moved back (at most 3 bytes) to the start of
// a UTF-8 sequence so that data[:n] does not end inside a rune.
func cutRuneBoundary(data []byte, n int) int {
	if n >= len(data) {
		return len(data)
	}
	for k := 0; k < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(data[n]); k++ {
		n--
	}
	return n
}

// errText is the error without the path (reasons carry the path apart).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// expansion is the state of one top-level file while its imports are
// expanded into out.
type expansion struct {
	file  *File
	trees []*tree // imports are opened below the first that holds them
	what  string  // what the trees are, for reasons
	out   strings.Builder
	// room is how much text the file can still use: the text budget less
	// the text of the more specific files. Once out holds that much, no
	// import is read: the caller could not use its text.
	room   int64
	unread int // import tokens left as they are because room ran out
}

// expandTop returns text (the file at path) with its imports expanded.
func (s *scanner) expandTop(x *expansion, text, path string, info fs.FileInfo) string {
	toks := findImports(text)
	if len(toks) == 0 {
		return text
	}
	x.out.Grow(len(text))
	s.expand(x, text, toks, path, 0, []fs.FileInfo{info})
	return x.out.String()
}

// expand writes text (belonging to file `from`, at import depth `depth`)
// to x.out with its import tokens toks replaced by the imported files'
// text, recursively.
func (s *scanner) expand(x *expansion, text string, toks []importToken, from string, depth int, chain []fs.FileInfo) {
	last := 0
	for i, t := range toks {
		x.out.WriteString(text[last:t.Start])
		if int64(x.out.Len()) >= x.room {
			x.unread += len(toks) - i
			x.out.WriteString(text[t.Start:])
			return
		}
		last = t.End
		s.importOne(x, t.Path, from, depth, chain)
	}
	x.out.WriteString(text[last:])
}

func (s *scanner) importOne(x *expansion, ip, from string, depth int, chain []fs.FileInfo) {
	target := ip
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(from), filepath.FromSlash(ip))
	}
	target = filepath.Clean(target)
	fail := func(reason string) {
		s.skip(target, "import @"+ip+" in "+from+": "+reason)
		x.file.Notes = append(x.file.Notes, "import @"+ip+" skipped: "+reason)
		x.out.WriteString("[import @" + ip + " skipped: " + reason + "]")
	}
	if depth+1 > s.cfg.MaxImportDepth {
		fail(fmt.Sprintf("import depth over %d", s.cfg.MaxImportDepth))
		return
	}
	var t *tree
	for _, c := range x.trees {
		if c.rel(target) != "" {
			t = c
			break
		}
	}
	if t == nil {
		fail("outside " + x.what)
		return
	}
	li := s.probe(target)
	if li == nil {
		fail("not found")
		return
	}
	rd, reason := s.readFile(t, target, li, func(info fs.FileInfo) string {
		for _, c := range chain {
			if os.SameFile(c, info) {
				return "import cycle"
			}
		}
		if prev := s.duplicateOf(info); prev != "" {
			return "already included from " + prev
		}
		return ""
	})
	if reason != "" {
		fail(reason)
		return
	}
	if strings.TrimSpace(rd.text) == "" {
		fail("empty or whitespace-only file")
		return
	}
	s.included = append(s.included, includedFile{info: rd.info, path: target})
	f := x.file
	f.Imports = append(f.Imports, target)
	f.Notes = append(f.Notes, "imported "+target)
	for _, n := range rd.notes {
		f.Notes = append(f.Notes, target+": "+n)
	}
	if rd.truncated {
		f.Truncated = true
	}
	// Trailing line breaks are dropped so that "see @x.md." stays one line.
	text := strings.TrimRight(rd.text, "\r\n")
	next := append(chain[:len(chain):len(chain)], rd.info)
	s.expand(x, text, findImports(text), target, depth+1, next)
}
