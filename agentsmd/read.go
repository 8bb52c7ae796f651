package agentsmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// openedFile is what readSafe needs from an open file (an *os.File; tests
// substitute failing files).
type openedFile interface {
	io.Reader
	Stat() (fs.FileInfo, error)
	Close() error
}

func osOpen(name string) (openedFile, error) { return os.Open(name) }

type readResult struct {
	text      string
	info      fs.FileInfo // Stat of the opened file (identity for SameFile)
	notes     []string
	truncated bool
}

// readSafe reads path under the safety rules; a non-empty reason means
// the file is refused. li is the Lstat result of path.
func (s *scanner) readSafe(path string, li fs.FileInfo, r root) (readResult, string) {
	s.d.Stats.ResolveCalls++
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		if li.Mode()&fs.ModeSymlink != 0 {
			return readResult{}, "broken symlink"
		}
		return readResult{}, "cannot resolve path: " + errText(err)
	}
	if !within(resolved, r.real) && !within(resolved, r.lex) {
		if li.Mode()&fs.ModeSymlink != 0 {
			return readResult{}, "symlink resolves outside the " + r.what
		}
		return readResult{}, "resolves outside the " + r.what + " through a symlinked directory"
	}
	s.d.Stats.StatCalls++
	fi, err := os.Stat(resolved)
	if err != nil {
		return readResult{}, "unreadable: " + errText(err)
	}
	if !fi.Mode().IsRegular() {
		return readResult{}, "not a regular file (" + fi.Mode().Type().String() + ")"
	}
	f, err := s.open(resolved)
	if err != nil {
		return readResult{}, "unreadable: " + errText(err)
	}
	defer f.Close()
	s.d.Stats.FilesOpened++
	fi, err = f.Stat()
	if err != nil {
		return readResult{}, "unreadable: " + errText(err)
	}
	if !fi.Mode().IsRegular() { // swapped between Stat and Open
		return readResult{}, "not a regular file (" + fi.Mode().Type().String() + ")"
	}
	limit := s.cfg.MaxFileBytes
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	s.d.Stats.BytesRead += int64(len(data))
	if err != nil {
		return readResult{}, "unreadable: " + errText(err)
	}
	sniff := data
	if len(sniff) > binarySniffBytes {
		sniff = sniff[:binarySniffBytes]
	}
	if bytes.IndexByte(sniff, 0) >= 0 {
		return readResult{}, "binary file (NUL byte in the first 8 KiB)"
	}
	res := readResult{info: fi}
	if int64(len(data)) > limit {
		data = data[:cutRuneBoundary(data, int(limit))]
		res.truncated = true
		note := fmt.Sprintf("truncated: kept the first %d bytes of %d (per-file cap %d bytes)", len(data), fi.Size(), limit)
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

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// expand replaces the @imports of text (belonging to file `from`, at import
// depth `depth`) with the imported files' text, recursively.
func (s *scanner) expand(text, from string, depth int, r root, chain []fs.FileInfo, f *File) string {
	toks := findImports(text)
	if len(toks) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, t := range toks {
		b.WriteString(text[last:t.Start])
		last = t.End
		b.WriteString(s.importOne(t.Path, from, depth, r, chain, f))
	}
	b.WriteString(text[last:])
	return b.String()
}

func (s *scanner) importOne(ip, from string, depth int, r root, chain []fs.FileInfo, f *File) string {
	target := ip
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(from), filepath.FromSlash(ip))
	}
	target = filepath.Clean(target)
	fail := func(reason string) string {
		s.skip(target, "import @"+ip+" in "+from+": "+reason)
		f.Notes = append(f.Notes, "import @"+ip+" skipped: "+reason)
		return "[import @" + ip + " skipped: " + reason + "]"
	}
	if depth+1 > s.cfg.MaxImportDepth {
		return fail(fmt.Sprintf("import depth over %d", s.cfg.MaxImportDepth))
	}
	if !within(target, r.lex) && !within(target, r.real) {
		return fail("outside " + r.what)
	}
	li := s.probe(target)
	if li == nil {
		return fail("not found")
	}
	rd, reason := s.readSafe(target, li, r)
	if reason != "" {
		return fail(reason)
	}
	for _, c := range chain {
		if os.SameFile(c, rd.info) {
			return fail("import cycle")
		}
	}
	if prev := s.duplicateOf(rd.info); prev != "" {
		return fail("already included from " + prev)
	}
	if strings.TrimSpace(rd.text) == "" {
		return fail("empty or whitespace-only file")
	}
	s.included = append(s.included, includedFile{info: rd.info, path: target})
	f.Imports = append(f.Imports, target)
	f.Notes = append(f.Notes, "imported "+target)
	for _, n := range rd.notes {
		f.Notes = append(f.Notes, target+": "+n)
	}
	if rd.truncated {
		f.Truncated = true
	}
	next := append(chain[:len(chain):len(chain)], rd.info)
	return strings.TrimRight(s.expand(rd.text, target, depth+1, r, next, f), "\r\n")
}
