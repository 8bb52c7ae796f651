package corpus

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// memory is what the scripted agent has seen in the outputs so far, with the step of the last
// sighting: what it can come back to later, as real agents do.
type memory struct {
	hits   []seenHit
	files  map[string]int // repository path → step last seen in an output
	idents map[string]int // module function and type names → step last seen in an output
	viewed map[string][][2]int
	opened map[string]bool // hits already read around
}

// seenHit is a "path:line:" location an output named (grep hits, test failures).
type seenHit struct {
	path string
	line int
	text string
	step int
}

func (h seenHit) key() string { return h.path + ":" + strconv.Itoa(h.line) }

func newMemory() memory {
	return memory{files: map[string]int{}, idents: map[string]int{}, viewed: map[string][][2]int{}, opened: map[string]bool{}}
}

var (
	hitRE   = regexp.MustCompile(`(?m)^(?:\./|/testbed/)?((?:[\w.-]+/)*[\w.-]+\.go):(\d+):(.*)$`)
	pathRE  = regexp.MustCompile(`(?:\./|/testbed/)?((?:[\w.-]+/)*[\w.-]+\.go)\b`)
	whereRE = regexp.MustCompile(`\b([\w.-]+\.go):(\d+)`)
	wordRE  = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]{3,}\b`)
)

// observe records what an output of step named.
func (m *memory) observe(idx *srcIndex, step int, out, focusDir string) {
	for _, sm := range hitRE.FindAllStringSubmatch(out, -1) {
		p := sm[1]
		if idx.byPath[p] == nil {
			continue
		}
		line, _ := strconv.Atoi(sm[2])
		m.hits = append(m.hits, seenHit{path: p, line: line, text: strings.TrimSpace(sm[3]), step: step})
	}
	// Test failures name base names: they are files of the package under test.
	for _, sm := range whereRE.FindAllStringSubmatch(out, -1) {
		p := path.Join(focusDir, sm[1])
		if idx.byPath[p] == nil || strings.Contains(sm[0], "/") {
			continue
		}
		line, _ := strconv.Atoi(sm[2])
		m.hits = append(m.hits, seenHit{path: p, line: line, step: step})
	}
	for _, sm := range pathRE.FindAllStringSubmatch(out, -1) {
		if idx.byPath[sm[1]] != nil {
			m.files[sm[1]] = step
		}
	}
	for _, w := range wordRE.FindAllString(out, -1) {
		if len(idx.funcsNamed(w)) > 0 || idx.types[w] != nil {
			m.idents[w] = step
		}
	}
}

func (m *memory) markViewed(file string, from, to int) {
	m.viewed[file] = append(m.viewed[file], [2]int{from, to})
}

// seenLines reports whether lines from..to of file were all shown before.
func (m *memory) seenLines(file string, from, to int) bool {
	for _, r := range m.viewed[file] {
		if r[0] <= from && to <= r[1] {
			return true
		}
	}
	return false
}

// aged is an item with the step it was last seen at.
type aged struct {
	key  string
	step int
}

func agedOf(m map[string]int) []aged {
	out := make([]aged, 0, len(m))
	for k, s := range m {
		out = append(out, aged{k, s})
	}
	slices.SortFunc(out, func(a, b aged) int {
		if a.step != b.step {
			return b.step - a.step // newest first
		}
		return strings.Compare(a.key, b.key)
	})
	return out
}
