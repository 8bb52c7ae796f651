package truncate

import (
	"maps"
	"slices"
	"strings"
	"unsafe"
)

// Minimum share of the budget that Value gives a string it cuts. Strings at or below these
// sizes are never cut by Value, however many there are, so a cut string always keeps a useful
// head and tail and its marker fits easily.
const (
	MinShareBytes = 1024
	MinShareLines = 8
)

// Value cuts the strings found anywhere in v (map[string]any, []any, []string and
// map[string]string values nested to any depth; other values are kept as they are) so that all
// its strings together stay within cfg.
//
// When the strings' total size exceeds MaxBytes (or their total line count exceeds MaxLines),
// the budget is shared out max-min fairly: every string gets the same cap, strings below the cap
// keep everything and give their unused share to the others, and only strings above the cap are
// cut, each by Text with the cap as its limits (so each cut string gets its own marker and note).
// The marker bytes and lines a cut adds are counted in the shares. Caps never go below
// MinShareBytes / MinShareLines (or the configured limit if smaller), so small strings always
// survive.
//
// Bound: the strings of the result total at most MaxBytes and MaxLines, except when more than
// MaxBytes/MinShareBytes strings (or MaxLines/MinShareLines) need cutting, or when a marker is
// longer than half a string's cap (tiny MaxBytes or a huge note); then each cut string still
// keeps at most its cap. Value applied to its own result changes nothing (fuzz-tested with
// MaxBytes >= 512).
//
// Value never mutates v: containers on the path to a cut string are copied (copy-on-write) and
// everything else is shared with v. When nothing is cut, v itself is returned. Map keys are not
// cut.
func Value(v any, cfg Config, note string) (any, Stats) {
	cfg = cfg.withDefaults()
	// First pass: bytes, and lines as long as the bytes seen so far fit (which bounds that scan
	// by MaxBytes). Within the budget, the value is returned as is after this one walk.
	m := measure{linesUpTo: cfg.MaxBytes}
	m.walk(v, 0)
	if m.bytes <= cfg.MaxBytes && m.lines <= cfg.MaxLines {
		return v, Stats{OriginalBytes: m.bytes, KeptBytes: m.bytes, OriginalLines: m.lines}
	}
	// Over the budget: measure again, keeping every string's size and line count (the common
	// in-budget case above allocates nothing).
	m = measure{collect: true}
	m.walk(v, 0)
	capBytes, capLines := shareBudget(m.sizes, m.lineCounts, cfg, len(Marker(m.lines, m.bytes, m.lines, m.bytes, note))+2)
	c := cutter{cfg: Config{MaxBytes: capBytes, MaxLines: capLines}.withDefaults(), note: note, newlines: m.newlines}
	out, _ := c.walk(v, 0)
	// Strings that were not cut count as kept whole.
	c.stats.OriginalBytes = m.bytes
	c.stats.OriginalLines = m.lines
	c.stats.KeptBytes = m.bytes - c.stats.OmittedBytes
	return out, c.stats
}

// maxDepth bounds recursion on pathological (self-referencing) values.
const maxDepth = 100

type measure struct {
	collect      bool // keep each string's size and line count
	linesUpTo    int  // if > 0, count lines only while the bytes seen so far are at most this
	bytes, lines int
	sizes        []int
	lineCounts   []int
	// newlines remembers the newline count of big strings (collect mode), so that cutting them
	// does not scan them again.
	newlines map[strKey]int
}

// bigString is the size from which measure remembers a string's newline count.
const bigString = 64 << 10

// strKey identifies a string by its bytes' address and length (the same string value seen by
// both walks of Value).
type strKey struct {
	p *byte
	n int
}

func keyOf(s string) strKey { return strKey{unsafe.StringData(s), len(s)} }

func (m *measure) str(s string) {
	m.bytes += len(s)
	if m.linesUpTo > 0 && m.bytes > m.linesUpTo {
		return
	}
	var l int
	if m.collect && len(s) >= bigString {
		nl := strings.Count(s, "\n")
		if m.newlines == nil {
			m.newlines = map[strKey]int{}
		}
		m.newlines[keyOf(s)] = nl
		l = nl
		if s[len(s)-1] != '\n' {
			l++
		}
	} else {
		l = countLines(s)
	}
	m.lines += l
	if !m.collect {
		return
	}
	m.sizes = append(m.sizes, len(s))
	m.lineCounts = append(m.lineCounts, l)
}

func (m *measure) walk(v any, depth int) {
	if depth > maxDepth {
		return
	}
	switch x := v.(type) {
	case string:
		m.str(x)
	case map[string]any:
		for _, e := range x {
			m.walk(e, depth+1)
		}
	case []any:
		for _, e := range x {
			m.walk(e, depth+1)
		}
	case []string:
		for _, e := range x {
			m.str(e)
		}
	case map[string]string:
		for _, e := range x {
			m.str(e)
		}
	}
}

// shareBudget returns the per-string byte and line caps. A cut string can gain bytes (its
// marker line) and lines (the marker, and a line split between head and tail), so the caps are
// recomputed with those gains counted for the strings they cut, until no new string is cut
// (usually after one or two rounds). The cut value then stays within the limits, and Value
// applied to it again changes nothing.
func shareBudget(sizes, lines []int, cfg Config, markerMax int) (capBytes, capLines int) {
	floorB, floorL := min(MinShareBytes, cfg.MaxBytes), min(MinShareLines, cfg.MaxLines)
	needB, needL := slices.Clone(sizes), slices.Clone(lines)
	for range 16 {
		capBytes = fairCap(needB, cfg.MaxBytes, floorB)
		capLines = fairCap(needL, cfg.MaxLines, floorL)
		grew := false
		for i := range sizes {
			if sizes[i] <= capBytes && lines[i] <= capLines {
				continue // kept whole
			}
			if needB[i] < sizes[i]+markerMax {
				needB[i], grew = sizes[i]+markerMax, true
			}
			if needL[i] < lines[i]+2 {
				needL[i], grew = lines[i]+2, true
			}
		}
		if !grew {
			break
		}
	}
	return capBytes, capLines
}

// fairCap returns the largest cap c such that sum(min(size, c)) <= budget, but at least floor.
// If everything fits it returns the largest size (no cut).
func fairCap(sizes []int, budget, floor int) int {
	s := slices.Clone(sizes)
	slices.Sort(s)
	remaining := budget
	for i, size := range s {
		left := len(s) - i
		if size*left <= remaining {
			remaining -= size
			continue
		}
		return max(remaining/left, floor)
	}
	if len(s) == 0 {
		return max(budget, floor)
	}
	return max(s[len(s)-1], floor)
}

type cutter struct {
	cfg      Config // effective per-string caps
	note     string
	newlines map[strKey]int
	stats    Stats
}

func (c *cutter) str(s string) (string, bool) {
	nl := -1
	if len(s) >= bigString {
		if v, ok := c.newlines[keyOf(s)]; ok {
			nl = v
		}
	}
	out, st := text(s, c.cfg, c.note, nl)
	if !st.Truncated {
		return s, false
	}
	c.stats.Truncated = true
	c.stats.StringsCut++
	c.stats.OmittedLines += st.OmittedLines
	c.stats.OmittedBytes += st.OmittedBytes
	return out, true
}

// walk returns the (possibly copied) value and whether anything below it changed.
func (c *cutter) walk(v any, depth int) (any, bool) {
	if depth > maxDepth {
		return v, false
	}
	switch x := v.(type) {
	case string:
		return c.str(x)
	case map[string]any:
		return cowMap(v, x, func(e any) (any, bool) { return c.walk(e, depth+1) })
	case []any:
		return cowSlice(v, x, func(e any) (any, bool) { return c.walk(e, depth+1) })
	case []string:
		return cowSlice(v, x, c.str)
	case map[string]string:
		return cowMap(v, x, c.str)
	}
	return v, false
}

// cowMap applies f to every value of x and returns a copy holding the changed values, or (orig,
// false) when nothing changed: x itself is never written.
func cowMap[V any](orig any, x map[string]V, f func(V) (V, bool)) (any, bool) {
	var out map[string]V
	for k, e := range x {
		if ne, changed := f(e); changed {
			if out == nil {
				out = maps.Clone(x)
			}
			out[k] = ne
		}
	}
	if out == nil {
		return orig, false
	}
	return out, true
}

// cowSlice is cowMap for slices.
func cowSlice[V any](orig any, x []V, f func(V) (V, bool)) (any, bool) {
	var out []V
	for i, e := range x {
		if ne, changed := f(e); changed {
			if out == nil {
				out = slices.Clone(x)
			}
			out[i] = ne
		}
	}
	if out == nil {
		return orig, false
	}
	return out, true
}
