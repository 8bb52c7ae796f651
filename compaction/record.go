package compaction

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Bounds of a ledger's record of what the tools did and returned. Past one, the entry used
// longest ago goes (the least used among equally old), and the ledger counts what it held.
const (
	maxFiles    = 200 // paths the commands used or the outputs named
	maxCommands = 60  // distinct command lines
	maxFailing  = 40  // failing tests
	maxValues   = 240 // values results returned
	maxRequests = 80  // calls with identifying values
	maxRanges   = 8   // line ranges per file (the closest are merged past it)
	maxLines    = 6   // lines named per file, newest first
)

// toolRecord is a Ledger's record of what the tools did and returned (ledgerStep), each entry
// bounded, the oldest going first past a bound (what it held counted in the Other fields). Step
// counts the tool steps recorded: entries hold the Step of their last use ("newest first").
// Its JSON names are the marker record's: a ledger stores it beside its own fields.
type toolRecord struct {
	Step int `json:"step,omitempty"`
	// Files maps a path to what the shell commands did to it and the lines outputs named in it.
	Files         map[string]fileRecord `json:"files,omitempty"`
	OtherFileUses int                   `json:"otherFileUses,omitempty"`
	// Commands maps a shell command line to its runs and exit status.
	Commands  map[string]commandRecord `json:"commands,omitempty"`
	OtherRuns int                      `json:"otherRuns,omitempty"`
	// Failing maps a failing test's name to how often an output named it failing.
	Failing       map[string]seenRecord `json:"failing,omitempty"`
	OtherFailures int                   `json:"otherFailures,omitempty"`
	// Values maps an identifier-like value results returned to its key path and the call that
	// returned it.
	Values      map[string]valueRecord `json:"values,omitempty"`
	OtherValues int                    `json:"otherValues,omitempty"`
	// Requests maps a call with the identifying values it passed (name(key=value, …)) to its
	// count.
	Requests      map[string]requestRecord `json:"requests,omitempty"`
	OtherRequests int                      `json:"otherRequests,omitempty"`
}

// fileRecord is what the shell commands (and the tools writing files) did to one path, and how
// often outputs named it.
type fileRecord struct {
	Read   int `json:"read,omitempty"`
	Search int `json:"search,omitempty"`
	Write  int `json:"write,omitempty"`
	Create int `json:"create,omitempty"`
	Remove int `json:"remove,omitempty"`
	Use    int `json:"use,omitempty"`
	Named  int `json:"named,omitempty"`
	// Ranges are the line ranges read, merged, in line order (tails last).
	Ranges []lineRange `json:"ranges,omitempty"`
	// Lines are the lines outputs named (file:line), newest first.
	Lines []int `json:"lines,omitempty"`
	// Last is the ledger's Step when it was last used.
	Last int `json:"last"`
}

func (f *fileRecord) uses() int {
	return f.Read + f.Search + f.Write + f.Create + f.Remove + f.Use + f.Named
}

// acted reports whether a command did something to the file (beyond an output naming it).
func (f *fileRecord) acted() bool { return f.uses() > f.Named }

// commandRecord is one command line a shell tool ran.
type commandRecord struct {
	Runs   int `json:"runs"`
	Failed int `json:"failed,omitempty"` // runs with a non-zero exit status
	// Exit is the newest run's exit status (nil: not reported).
	Exit *int `json:"exit,omitempty"`
	Last int  `json:"last"`
}

// seenRecord counts how often something was seen, and when last.
type seenRecord struct {
	Count int `json:"count"`
	Last  int `json:"last"`
}

// valueRecord is an identifier-like value a result returned: under which key path, from which
// call (the newest that returned it).
type valueRecord struct {
	Key   string `json:"key"`
	From  string `json:"from"`
	Count int    `json:"count"`
	Last  int    `json:"last"`
}

// requestRecord is a call made with identifying values.
type requestRecord struct {
	Count  int `json:"count"`
	Failed int `json:"failed,omitempty"`
	Last   int `json:"last"`
}

// applyStep adds one tool step to the record.
func (l *Ledger) applyStep(s *ledgerStep) {
	l.tools.Step++
	now := l.tools.Step
	failed := s.Exit != nil && *s.Exit != 0
	if s.Command != "" && (s.Run || failed) {
		c, ok := l.tools.Commands[s.Command]
		if !ok && len(l.tools.Commands) >= maxCommands {
			l.tools.OtherRuns += evictOldest(l.tools.Commands, func(c commandRecord) (int, int) { return c.Last, c.Runs }, nil)
		}
		c.Runs++
		if failed {
			c.Failed++
		}
		c.Exit, c.Last = nil, now
		if s.Exit != nil {
			exit := *s.Exit
			c.Exit = &exit
		}
		l.tools.Commands = setIn(l.tools.Commands, s.Command, c)
	}
	for _, op := range s.Files {
		l.addFileOp(op, now)
	}
	l.tools.OtherFileUses += s.FilesOver
	for _, t := range s.Failing {
		r, ok := l.tools.Failing[t]
		if !ok && len(l.tools.Failing) >= maxFailing {
			l.tools.OtherFailures += evictOldest(l.tools.Failing, func(r seenRecord) (int, int) { return r.Last, r.Count }, nil)
		}
		r.Count++
		r.Last = now
		l.tools.Failing = setIn(l.tools.Failing, t, r)
	}
	from := s.Call
	if from == "" {
		from = s.Tool + "()"
	}
	if s.Call != "" {
		r, ok := l.tools.Requests[s.Call]
		if !ok && len(l.tools.Requests) >= maxRequests {
			l.tools.OtherRequests += evictOldest(l.tools.Requests, func(r requestRecord) (int, int) { return r.Last, r.Count }, nil)
		}
		r.Count++
		if s.Failed {
			r.Failed++
		}
		r.Last = now
		l.tools.Requests = setIn(l.tools.Requests, s.Call, r)
	}
	for _, v := range s.Values {
		r, ok := l.tools.Values[v.Value]
		if !ok && len(l.tools.Values) >= maxValues {
			// Dates and times go first, as a bounded record leaves them out first (recordItem.stamp):
			// a service's results return dozens, and the ids the first lookups returned must outlive them.
			l.tools.OtherValues += evictOldest(l.tools.Values, func(r valueRecord) (int, int) { return r.Last, r.Count }, dateLike.MatchString)
		}
		r.Key, r.From, r.Last = v.Key, from, now
		r.Count++
		l.tools.Values = setIn(l.tools.Values, v.Value, r)
	}
	l.tools.OtherValues += s.ValuesOver
}

func (l *Ledger) addFileOp(op fileOp, now int) {
	if op.Path == "" {
		return
	}
	f, ok := l.tools.Files[op.Path]
	if !ok && len(l.tools.Files) >= maxFiles {
		l.tools.OtherFileUses += evictOldest(l.tools.Files, func(f fileRecord) (int, int) { return f.Last, f.uses() }, nil)
	}
	f.Ranges, f.Lines = slices.Clone(f.Ranges), slices.Clone(f.Lines) // a clone of the ledger may share them
	switch op.Op {
	case opRead:
		f.Read++
		f.Ranges = addRange(f.Ranges, op.Range)
	case opSearch:
		f.Search++
	case opWrite:
		f.Write++
	case opCreate:
		f.Create++
	case opRemove:
		f.Remove++
	case opUse:
		f.Use++
	default:
		f.Named++
	}
	for _, n := range op.Lines {
		if n <= 0 {
			continue
		}
		f.Lines = slices.DeleteFunc(f.Lines, func(x int) bool { return x == n })
		f.Lines = slices.Insert(f.Lines, 0, n)
		if len(f.Lines) > maxLines {
			f.Lines = f.Lines[:maxLines]
		}
	}
	f.Last = now
	l.tools.Files = setIn(l.tools.Files, op.Path, f)
}

func setIn[T any](m map[string]T, k string, v T) map[string]T {
	if m == nil {
		m = map[string]T{}
	}
	m[k] = v
	return m
}

// evictOldest removes from m the entry used longest ago (the least used of equally old ones,
// then the greatest key), one whose key early reports before any other (early may be nil), and
// returns its uses.
func evictOldest[T any](m map[string]T, rank func(T) (last, uses int), early func(key string) bool) int {
	var key string
	var kl, ku int
	var ke bool
	first := true
	for k, v := range m {
		last, uses := rank(v)
		e := early != nil && early(k)
		if first || e && !ke || e == ke && (last < kl || (last == kl && (uses < ku || (uses == ku && k > key)))) {
			key, kl, ku, ke, first = k, last, uses, e, false
		}
	}
	if first {
		return 0
	}
	delete(m, key)
	return ku
}

// addRange adds a range read to a file's ranges: known ranges are merged where they overlap or
// touch, kept in line order, the tails (last N lines) after them as the longest one; past
// maxRanges the two closest ranges are merged.
func addRange(rs []lineRange, r lineRange) []lineRange {
	switch {
	case r.From == 0:
		return rs
	case r.From < 0:
		if len(rs) > 0 && rs[0] == (lineRange{From: 1}) {
			return rs
		}
		for i, x := range rs {
			if x.From < 0 {
				rs[i].From = min(x.From, r.From)
				return rs
			}
		}
		return append(rs, r)
	}
	var heads, tails []lineRange
	for _, x := range rs {
		if x.From < 0 {
			tails = append(tails, x)
		} else {
			heads = append(heads, x)
		}
	}
	heads = append(heads, r)
	slices.SortFunc(heads, func(a, b lineRange) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(endOf(a), endOf(b))) })
	merged := heads[:1]
	for _, x := range heads[1:] {
		last := &merged[len(merged)-1]
		if end := endOf(*last); end == maxLine || x.From <= end+1 {
			if endOf(x) > end {
				last.To = x.To
			}
			continue
		}
		merged = append(merged, x)
	}
	if merged[0] == (lineRange{From: 1}) {
		return merged[:1] // the whole file: nothing else to say
	}
	for len(merged) > maxRanges {
		// Merge the two closest neighbours.
		best := 0
		for i := 1; i < len(merged)-1; i++ {
			if merged[i+1].From-endOf(merged[i]) < merged[best+1].From-endOf(merged[best]) {
				best = i
			}
		}
		merged[best].To = merged[best+1].To
		merged = slices.Delete(merged, best+1, best+2)
	}
	return append(merged, tails...)
}

// maxLine stands for the end of a file in range arithmetic.
const maxLine = 1 << 40

func endOf(r lineRange) int {
	if r.To == wholeFile {
		return maxLine
	}
	return r.To
}

func (r lineRange) String() string {
	switch {
	case r.From < 0:
		return "last " + strconv.Itoa(-r.From)
	case r.From == 1 && r.To == wholeFile:
		return "whole file"
	case r.To == wholeFile:
		return strconv.Itoa(r.From) + "-end"
	case r.From == r.To:
		return strconv.Itoa(r.From)
	}
	return strconv.Itoa(r.From) + "-" + strconv.Itoa(r.To)
}

// Section titles of the record in a rendered ledger.
const (
	secShellFiles = "Files the commands read (line ranges), searched, wrote, created or removed, newest first:"
	secNamed      = "Paths and file:line locations the tool outputs named, newest first:"
	secCommands   = "Commands run, newest first (exit status of the last run):"
	secFailing    = "Failing tests seen, newest first:"
	secValues     = "Calls with the identifying values they passed, and values results returned (exact), newest first:"
)

// recordItem is one line (or, for values, one value of a line) of the rendered record.
type recordItem struct {
	sec   string
	key   string // the path, command, test, value or call
	group string // values: the call whose line holds it
	text  string
	last  int
	uses  int
	call  bool // a call's own line (secValues)
	// stamp: a date or time a result returned — the most numerous values of a service's
	// results (schedules, creation times) and the least often passed back: dropped first.
	stamp bool
	at    int // its place in dropping order
}

// recordLayout is the record laid out for rendering: items newest first per section; drop
// removes the oldest (least used) item of all, counting what it held so totals stay exact.
type recordLayout struct {
	items   []*recordItem // all, in dropping order: oldest first
	dropped int           // items[:dropped] are dropped
	// What was dropped at rendering, plus what the ledger no longer holds (base).
	recordOthers
	base recordOthers
	// per section, in rendering order
	bySec map[string][]*recordItem
}

// recordOthers counts what a rendered record leaves out.
type recordOthers struct {
	otherFiles, otherFileUses, otherRuns, otherFailures, otherValues, otherRequests int
}

// kept reports whether an item is still rendered.
func (r *recordLayout) kept(it *recordItem) bool { return it.at >= r.dropped }

// reset undoes every drop.
func (r *recordLayout) reset() { r.dropped, r.recordOthers = 0, r.base }

func (l *Ledger) recordLayout() *recordLayout {
	r := &recordLayout{bySec: map[string][]*recordItem{}, base: recordOthers{otherFileUses: l.tools.OtherFileUses, otherRuns: l.tools.OtherRuns,
		otherFailures: l.tools.OtherFailures, otherValues: l.tools.OtherValues, otherRequests: l.tools.OtherRequests}}
	r.recordOthers = r.base
	add := func(it *recordItem) { r.items = append(r.items, it) }
	for p, f := range l.tools.Files {
		sec := secNamed
		if f.acted() {
			sec = secShellFiles
		}
		add(&recordItem{sec: sec, key: p, text: fileText(p, f), last: f.Last, uses: f.uses()})
	}
	for c, rec := range l.tools.Commands {
		add(&recordItem{sec: secCommands, key: c, text: commandText(c, rec), last: rec.Last, uses: rec.Runs})
	}
	for t, rec := range l.tools.Failing {
		text := t
		if rec.Count > 1 {
			text += " (×" + strconv.Itoa(rec.Count) + ")"
		}
		add(&recordItem{sec: secFailing, key: t, text: text, last: rec.Last, uses: rec.Count})
	}
	for c, rec := range l.tools.Requests {
		text := c
		if rec.Count > 1 {
			text += " ×" + strconv.Itoa(rec.Count)
		}
		if rec.Failed > 0 {
			text += ", failed ×" + strconv.Itoa(rec.Failed)
		}
		add(&recordItem{sec: secValues, key: c, group: c, text: text, last: rec.Last, uses: rec.Count, call: true})
	}
	for v, rec := range l.tools.Values {
		text := rec.Key + "=" + v
		switch {
		case rec.Key == "":
			text = v // a key of the result itself
		case strings.HasSuffix(rec.Key, "."+v) || rec.Key == v:
			text = rec.Key // the value is the key's last segment: an id-keyed map
		}
		add(&recordItem{sec: secValues, key: v, group: rec.From, text: text, last: rec.Last, uses: rec.Count, stamp: dateLike.MatchString(v)})
	}
	// Dropping order: oldest first, then least used, then by section and key (a total order:
	// equal ledgers lay out alike whatever their maps' order).
	slices.SortFunc(r.items, func(a, b *recordItem) int {
		return cmp.Or(-compareBool(a.stamp, b.stamp), cmp.Compare(a.last, b.last), cmp.Compare(a.uses, b.uses), cmp.Compare(a.sec, b.sec),
			cmp.Compare(b.group, a.group), cmp.Compare(b.key, a.key))
	})
	for i, it := range r.items {
		it.at = i
	}
	// Rendering order: the reverse, per section.
	for i := len(r.items) - 1; i >= 0; i-- {
		it := r.items[i]
		r.bySec[it.sec] = append(r.bySec[it.sec], it)
	}
	return r
}

func fileText(p string, f fileRecord) string {
	var parts []string
	count := func(verb string, n int) {
		switch {
		case n == 1:
			parts = append(parts, verb)
		case n > 1:
			parts = append(parts, verb+" ×"+strconv.Itoa(n))
		}
	}
	if f.Read > 0 {
		s := "read"
		if f.Read > 1 {
			s += " ×" + strconv.Itoa(f.Read)
		}
		if len(f.Ranges) > 0 {
			rs := make([]string, len(f.Ranges))
			for i, r := range f.Ranges {
				rs[i] = r.String()
			}
			if f.Ranges[0] == (lineRange{From: 1}) {
				s += " (whole file)"
			} else {
				s += " (lines " + strings.Join(rs, ", ") + ")"
			}
		}
		parts = append(parts, s)
	}
	count("searched", f.Search)
	count("wrote", f.Write)
	count("created", f.Create)
	count("removed", f.Remove)
	count("used", f.Use)
	if f.Named > 0 {
		s := "named"
		if f.Named > 1 {
			s += " ×" + strconv.Itoa(f.Named)
		}
		if len(f.Lines) > 0 {
			ls := make([]string, len(f.Lines))
			for i, n := range f.Lines {
				ls[i] = strconv.Itoa(n)
			}
			s += " at line " + strings.Join(ls, ", ")
		}
		parts = append(parts, s)
	}
	return p + ": " + strings.Join(parts, ", ")
}

func commandText(c string, rec commandRecord) string {
	var notes []string
	if rec.Exit != nil {
		notes = append(notes, "exit "+strconv.Itoa(*rec.Exit))
	}
	if rec.Runs > 1 {
		notes = append(notes, "×"+strconv.Itoa(rec.Runs))
	}
	if rec.Failed > 0 && (rec.Runs > 1 || rec.Exit == nil || *rec.Exit == 0) {
		notes = append(notes, "failed ×"+strconv.Itoa(rec.Failed))
	}
	if len(notes) == 0 {
		return c
	}
	return c + " (" + strings.Join(notes, "; ") + ")"
}

// drop removes the oldest item still kept; false when none is left.
func (r *recordLayout) drop() bool {
	if r.dropped < len(r.items) {
		it := r.items[r.dropped]
		r.dropped++
		switch it.sec {
		case secShellFiles, secNamed:
			r.otherFiles++
			r.otherFileUses += it.uses
		case secCommands:
			r.otherRuns += it.uses
		case secFailing:
			r.otherFailures += it.uses
		case secValues:
			if it.call {
				r.otherRequests += it.uses
			} else {
				r.otherValues++
			}
		}
		return true
	}
	return false
}

// write writes the record's sections, in reading order.
func (r *recordLayout) write(b *strings.Builder) {
	section := func(title string, lines []string, other string) {
		if len(lines) == 0 && other == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(title)
		for _, l := range lines {
			b.WriteString("\n- " + l)
		}
		if other != "" {
			b.WriteString("\n- " + other)
		}
	}
	kept := func(sec string) []string {
		var out []string
		for _, it := range r.bySec[sec] {
			if r.kept(it) {
				out = append(out, it.text)
			}
		}
		return out
	}
	files := kept(secShellFiles)
	named := kept(secNamed)
	otherFiles := ""
	if r.otherFileUses > 0 {
		otherFiles = "and " + strconv.Itoa(r.otherFileUses) + " uses of other files"
		if r.otherFiles > 0 {
			otherFiles = "and " + strconv.Itoa(r.otherFileUses) + " uses of " + strconv.Itoa(r.otherFiles) + " other files"
		}
	}
	if len(named) > 0 || len(files) == 0 {
		section(secShellFiles, files, "")
		section(secNamed, named, otherFiles)
	} else {
		section(secShellFiles, files, otherFiles)
	}
	section(secCommands, kept(secCommands), plural(r.otherRuns, "and %d other runs", "and 1 other run"))
	section(secFailing, kept(secFailing), plural(r.otherFailures, "and %d other test failures", "and 1 other test failure"))
	otherValues := joinNonEmpty(plural(r.otherRequests, "%d other calls", "1 other call"), plural(r.otherValues, "%d other values", "1 other value"))
	if otherValues != "" {
		otherValues = "and " + otherValues
	}
	section(secValues, r.valueLines(), otherValues)
}

// valueLines are the calls and the values their results returned, one line per call, newest
// first: "call ×N → key=value, …".
func (r *recordLayout) valueLines() []string {
	type group struct {
		head   string
		values []string
	}
	var order []string
	groups := map[string]*group{}
	for _, it := range r.bySec[secValues] {
		if !r.kept(it) {
			continue
		}
		g, ok := groups[it.group]
		if !ok {
			g = &group{head: it.group}
			groups[it.group] = g
			order = append(order, it.group)
		}
		if it.call {
			g.head = it.text
		} else {
			g.values = append(g.values, it.text)
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		g := groups[k]
		slices.Sort(g.values) // in key order, as the result held them
		line := g.head
		if len(g.values) > 0 {
			line += " → " + strings.Join(g.values, ", ")
		}
		out = append(out, line)
	}
	return out
}

func plural(n int, many, one string) string {
	switch n {
	case 0:
		return ""
	case 1:
		return one
	}
	return strings.Replace(many, "%d", strconv.Itoa(n), 1)
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

// cloneRecord deep-copies the record's maps.
func (l *Ledger) cloneRecord(c *Ledger) {
	c.tools.Files = maps.Clone(l.tools.Files)
	for p, f := range c.tools.Files {
		f.Ranges, f.Lines = slices.Clone(f.Ranges), slices.Clone(f.Lines)
		c.tools.Files[p] = f
	}
	c.tools.Commands = maps.Clone(l.tools.Commands)
	for k, rec := range c.tools.Commands {
		if rec.Exit != nil {
			e := *rec.Exit
			rec.Exit = &e
			c.tools.Commands[k] = rec
		}
	}
	c.tools.Failing = maps.Clone(l.tools.Failing)
	c.tools.Values = maps.Clone(l.tools.Values)
	c.tools.Requests = maps.Clone(l.tools.Requests)
}

// recordRoomBytes is the room a summary gives the record of what the tools did and returned
// besides its other bounds (ExtractiveSummarizer.MaxBytes, the facts appended to an LLM
// summary): the record's whole rendering, at most this.
const recordRoomBytes = 4 << 10

// recordText is the record rendered whole: its sections alone.
func (l *Ledger) recordText() string {
	var b strings.Builder
	l.recordLayout().write(&b)
	return b.String()
}

// recordRoom is the room a summary gives l's record: its whole rendering, at most
// recordRoomBytes.
func (l *Ledger) recordRoom() int { return min(len(l.recordText()), recordRoomBytes) }

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
