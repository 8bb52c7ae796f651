package instructions

import (
	"errors"
	"github.com/adkctx/adkctx/internal/config"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/instructions/internal/discover"
)

// Defaults and limits of Config.
const (
	// defaultMaxBytes is the default total budget of the merged text (32 KiB).
	defaultMaxBytes = 32768
	// minMaxBytes is the smallest valid non-zero MaxBytes: room for the
	// precedence statement and the cut markers.
	minMaxBytes = 1024
	// defaultMaxCachedDirs bounds the Loader cache (working directories).
	defaultMaxCachedDirs = 256
	// markerPrefix starts every marker merge writes into the text when it
	// cuts or omits a file to fit the budget.
	markerPrefix = "[adkctx: "
	// minKeep: a file that could keep fewer bytes than this is omitted
	// instead of cut to a useless stub.
	minKeep = 64
	// maxShownPath caps a path shown in a tag or marker (longer paths keep
	// their tail), so that the fixed overhead always fits in minMaxBytes.
	maxShownPath = 160
)

// header and precedence open every non-empty merged text.
const (
	header     = "# Instructions from AGENTS.md files"
	precedence = "The files below are ordered from the most general to the most specific. " +
		"When they conflict, follow the more deeply nested (later) file. " +
		"The user's explicit requests in this conversation override all of them."
)

// Config configures the merged text and the Loader cache. The zero value uses the defaults.
type Config struct {
	// MaxBytes is the budget of Merged.Text in bytes, everything included
	// (header, section tags, markers). Default 32 KiB; a non-zero
	// value must be at least 1024.
	MaxBytes int
	// MaxCachedDirs bounds how many working directories a Loader caches
	// (least recently used evicted). Default 256.
	MaxCachedDirs int
}

// Validate reports every invalid field as an *adkctx.ConfigError (joined).
func (c Config) Validate() error {
	var errs []error
	if c.MaxBytes < 0 || (c.MaxBytes > 0 && c.MaxBytes < minMaxBytes) {
		errs = append(errs, config.Errorf("MaxBytes", c.MaxBytes, "must be 0 (default %d) or ≥ %d", defaultMaxBytes, minMaxBytes))
	}
	if c.MaxCachedDirs < 0 {
		errs = append(errs, config.Errorf("MaxCachedDirs", c.MaxCachedDirs, "must be ≥ 0 (0 means default)"))
	}
	return errors.Join(errs...)
}

func (c Config) maxBytes() int {
	if c.MaxBytes == 0 {
		return defaultMaxBytes
	}
	return c.MaxBytes
}

// Source is the provenance of one file in the merged text.
type Source struct {
	// Path is the file's display path: relative to the project root
	// (slash-separated), or "~/..."/absolute for the global file.
	Path string
	// AbsPath is the file's absolute path.
	AbsPath string
	// Scope is agentsmd.ScopeGlobal or agentsmd.ScopeProject.
	Scope agentsmd.Scope
	// Bytes is the size of the file's text (imports expanded as far as
	// agentsmd.Config.TextBudget let them be, trailing whitespace removed);
	// KeptBytes how much of it is in Merged.Text.
	Bytes, KeptBytes int
	// Truncated: the file was cut (or omitted) to fit the budget.
	Truncated bool
	// Omitted: nothing of the file's text fits (a marker stands in for it).
	Omitted bool
	// FileTruncated: the file was over agentsmd.Config.MaxFileBytes.
	FileTruncated bool
	// Imports are the absolute paths imported into the file.
	Imports []string
}

// Merged is the merged instruction text with its provenance.
type Merged struct {
	// Text is the instruction text ("" when no file contributes);
	// len(Text) <= Config.MaxBytes always.
	Text string
	// Sources lists every contributing file, global → root → … → leaf.
	Sources []Source
	// Skipped are the files and imports the discovery refused.
	Skipped []agentsmd.Skip
	// Truncated: at least one file was cut or omitted to fit the budget.
	Truncated bool
	// Bytes is len(Text).
	Bytes int
	// Root and WorkDir come from the discovery.
	Root, WorkDir string
}

type section struct {
	open, body, close string
	path              string
	state             int // full, cut, omitted
	kept              int
}

const (
	stFull = iota
	stCut
	stOmitted
)

func (s *section) size() int {
	switch s.state {
	case stCut:
		return len(s.open) + s.kept + len(cutMarker(s.path, s.kept, len(s.body))) + len(s.close)
	case stOmitted:
		return len(omitMarker(s.path, len(s.body)))
	}
	return len(s.open) + len(s.body) + len(s.close)
}

func (s *section) render(b *strings.Builder) {
	switch s.state {
	case stCut:
		b.WriteString(s.open)
		b.WriteString(s.body[:s.kept])
		b.WriteString(cutMarker(s.path, s.kept, len(s.body)))
		b.WriteString(s.close)
	case stOmitted:
		b.WriteString(omitMarker(s.path, len(s.body)))
	default:
		b.WriteString(s.open)
		b.WriteString(s.body)
		b.WriteString(s.close)
	}
}

func cutMarker(path string, kept, total int) string {
	return "\n" + markerPrefix + "AGENTS.md file " + strconv.Quote(path) + " was cut to fit the instruction budget: kept the first " +
		strconv.Itoa(kept) + " of " + strconv.Itoa(total) + " bytes]"
}

func omitMarker(path string, total int) string {
	return "\n" + markerPrefix + "AGENTS.md file " + strconv.Quote(path) + " (" + strconv.Itoa(total) +
		" bytes) was omitted to fit the instruction budget]\n"
}

const fallbackMarker = "\n" + markerPrefix + "AGENTS.md instructions cut to fit the instruction budget]\n"

// shortPath keeps the tail of a very long path for display.
func shortPath(p string) string {
	if len(p) <= maxShownPath {
		return p
	}
	i := len(p) - (maxShownPath - len("…"))
	for i < len(p) && !utf8.RuneStart(p[i]) {
		i++
	}
	return "…" + p[i:]
}

func summaryMarker(files, total int) string {
	return "\n" + markerPrefix + strconv.Itoa(files) + " less specific AGENTS.md file(s) (" + strconv.Itoa(total) +
		" bytes) omitted to fit the instruction budget]\n"
}

// merge joins the discovered files into one instruction text, global first
// and the working directory's file last, within cfg.MaxBytes. See the
// package documentation for the format and the cutting rules. merge is pure
// and deterministic. A nil or empty discovery gives an empty Text. With an
// invalid MaxBytes (below minMaxBytes) every file is omitted and Text is "".
func merge(d *discover.Discovery, cfg Config) Merged {
	var m Merged
	if d == nil {
		return m
	}
	m.Root, m.WorkDir = d.Root, d.WorkDir
	m.Skipped = append([]agentsmd.Skip(nil), d.Skipped...)
	if len(d.Files) == 0 {
		return m
	}
	budget := cfg.maxBytes()
	secs := make([]section, len(d.Files))
	m.Sources = make([]Source, len(d.Files))
	for i, f := range d.Files {
		secs[i], m.Sources[i] = sectionOf(f)
	}
	preamble := header + "\n\n" + precedence + "\n"
	if budget < minMaxBytes {
		for i := range m.Sources {
			m.Sources[i].Truncated, m.Sources[i].Omitted = true, true
		}
		m.Truncated = true
		return m
	}
	summary := fit(secs, budget, len(preamble))
	var b strings.Builder
	b.WriteString(preamble)
	if summary != "" {
		b.WriteString(summary)
		secs[len(secs)-1].render(&b)
	} else {
		for i := range secs {
			secs[i].render(&b)
		}
	}
	text := b.String()
	hardCut := false
	if len(text) > budget { // defensive: unreachable with MaxBytes >= minMaxBytes
		text = preamble + fallbackMarker + text[len(preamble):]
		text = text[:cutRune(text, budget)]
		hardCut = true
	}
	for i := range secs {
		s := &m.Sources[i]
		switch secs[i].state {
		case stFull:
			s.KeptBytes = len(secs[i].body)
		case stCut:
			s.KeptBytes, s.Truncated = secs[i].kept, true
		case stOmitted:
			s.Truncated, s.Omitted = true, true
		}
		s.Truncated = s.Truncated || hardCut
		m.Truncated = m.Truncated || s.Truncated
	}
	m.Text, m.Bytes = text, len(text)
	return m
}

// sectionOf is the section of the merged text for f, and its Source (sizes before any cut).
func sectionOf(f discover.File) (section, Source) {
	body := f.Content
	if !utf8.ValidString(body) {
		body = strings.ToValidUTF8(body, "\uFFFD")
	}
	body = strings.TrimRight(body, " \t\r\n")
	full := f.RelPath
	if full == "" {
		full = f.Path
	}
	path := shortPath(full)
	attrs := "path=" + strconv.Quote(path)
	if f.Scope == agentsmd.ScopeGlobal {
		attrs += ` scope="global"`
	}
	return section{open: "\n<agents_md " + attrs + ">\n", body: body, close: "\n</agents_md>\n", path: path},
		Source{Path: full, AbsPath: f.Path, Scope: f.Scope, Bytes: len(body), FileTruncated: f.Truncated,
			Imports: append([]string(nil), f.Imports...)}
}

// fit cuts or omits sections, the less specific files first, so that they and the preamble
// (fixed bytes) fit budget. When even the stubs of the less specific files leave no room, they
// are all omitted and fit returns the one marker that stands for them.
func fit(secs []section, budget, fixed int) (summary string) {
	total := fixed
	for i := range secs {
		total += secs[i].size()
	}
	n := len(secs)
	for i := 0; i < n-1 && total > budget; i++ {
		total -= shrink(&secs[i], total-budget)
	}
	if total > budget && n > 1 {
		omitted, bytes := 0, 0
		for i := 0; i < n-1; i++ {
			total -= secs[i].size()
			secs[i].state = stOmitted
			omitted++
			bytes += len(secs[i].body)
		}
		summary = summaryMarker(omitted, bytes)
		total += len(summary)
	}
	if total > budget {
		shrink(&secs[n-1], total-budget)
	}
	return summary
}

// shrink cuts (keeping the head) or omits s so that it frees at least
// excess bytes if it can; it returns the number of bytes freed.
func shrink(s *section, excess int) int {
	before := s.size()
	b := len(s.body)
	k0 := b - excess - len(cutMarker(s.path, b, b)) // marker(k) is never longer than marker(b)
	if k0 >= minKeep {
		s.state, s.kept = stCut, cutRune(s.body, k0)
	} else {
		s.state = stOmitted
	}
	after := s.size()
	if after > before { // omitting a tiny section can cost more than keeping it
		s.state = stFull
		return 0
	}
	return before - after
}

// cutRune returns the largest k <= n such that s[:k] ends on a rune boundary.
func cutRune(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
