package truncate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Floor share of the budget that Value gives an element of a list or map it keeps. A string at or
// below these sizes is never cut while the budget can hold it whole: when there are too many such
// elements, Value leaves elements out instead, so a cut string always keeps a useful head and
// tail and its marker fits easily.
const (
	minShareBytes = 1024
	minShareLines = 8
)

// Limits of the walk. The token estimator (package budget) walks values 10,000 levels deep and
// 1<<20 values per part, so it counts everything Value lets through exactly.
const (
	// maxDepth is the deepest container nesting Value keeps: a container nested deeper is replaced
	// by a head+tail cut of its JSON text.
	maxDepth = 64
	// maxNodes bounds the values walked in a subtree that Value encodes as JSON or leaves out, so
	// that cycles and shared subtrees that expand exponentially stop.
	maxNodes = 1 << 20
	// maxDecodeBytes: a value of another Go type whose JSON text is at most this long is decoded
	// into maps and slices and cut like them; a longer one is cut as JSON text.
	maxDecodeBytes = 1 << 20
	// omittedKey is the map key of the marker saying how many entries Value left out.
	omittedKey = "..."
)

// Cut describes one thing Value cut: a string, a []byte, the JSON text of a value that Value could
// not keep as it was, or the elements a list or map left out. It carries the original, so the
// caller can store it whole (for example as an artifact) and name it in that cut's marker.
type Cut struct {
	// Path locates the leaf in the original value as a JSON Pointer (RFC 6901): "" is the value
	// itself, "/stdout" a map entry, "/runs/0/log" a deeper one.
	Path string
	// Index is this cut's position among the Count cuts of one Value call (in walk order: sorted
	// map keys, list order).
	Index, Count int
	// Text is the original when it was a string. Bytes is the original when it was a []byte, or
	// the JSON text (encoding/json) of a value that was nested too deep or was of another Go type
	// too large to decode; Bytes is nil otherwise.
	Text  string
	Bytes []byte
	// Omitted, when not zero, says that this cut is the elements a list or map at Path left out:
	// that many, in Bytes as a JSON array or object (strings that are not valid UTF-8 get
	// U+FFFD there, as encoding/json writes them). Their marker carries the note.
	Omitted int
}

// Value bounds a tool result of any shape so that its JSON text stays within cfg, and never
// mutates v.
//
// Size: the budget covers the whole value as compact JSON, counting strings and []byte by their
// raw length (not their escaped or base64 form) and map keys, numbers, brackets and separators by
// their text. The line budget covers the lines of its strings and []byte.
//
// Within the limits, v itself is returned. Otherwise the budget is shared out max-min fairly
// between the elements of each map and list, level by level: an element below its share keeps
// everything and gives the rest to the others, a string above it is cut by Text (head and tail,
// one marker each), a container above it is cut the same way inside. Each element is due a floor
// share: 1 KiB and 8 lines (or its size if smaller), less when the first and the last
// element would not both get one, but never less than a cut string needs beside its marker (about
// 330 bytes and 3 lines). When a list or map holds more elements than the budget can give their
// floor share, its last and first elements are kept, alternately, while their floors fit, and a
// marker says how many were left out: a list gets a marker string between its head and tail, a
// map (whose entries are taken in key order) a "..." entry.
//
// Shapes:
//   - map[string]any, []any, []string, map[string]string are walked; strings are cut.
//   - A []byte is sent by encoding/json as base64. Value counts it like a string; when it is cut,
//     or does not fit as base64, it becomes a string of its head and tail read as text (a tool
//     returning bytes almost always returns command output): the model reads text, not base64,
//     and the whole bytes are available through Cut.Bytes.
//   - Values of other Go types (structs, typed slices and maps, pointers, json.Marshaler) are
//     measured in their JSON form: their JSON text decoded into maps and slices (numbers as
//     json.Number) when it is at most 1 MiB, else the text itself. Within the budget they are kept
//     as they are; otherwise that JSON form replaces them and is cut.
//   - A NaN or infinite float64 or float32, which JSON has no number for (encoding/json refuses
//     it, and adk-go's database session service with it the whole event), becomes the string
//     "NaN", "+Inf" or "-Inf", however small the value holding it: the result is then never the
//     same as v. It is measured as that string (the same bytes as the number's text, one line)
//     and counted in Stats.NumbersReplaced. Inside a value of another Go type it makes the JSON
//     form fail, like a channel (below).
//   - Containers nested more than 64 levels deep are replaced by a head+tail cut of their JSON
//     text; a value that cannot be encoded (a cycle, a channel, more than 1<<20 values) by a
//     marker naming its type.
//
// note, when not nil, is called once per Cut, in Index order, after every cut is decided: once per
// cut leaf, and once per list or map that left elements out (Cut.Omitted; their JSON is made only
// for a note). Its result (at most 200 bytes are used) goes in that cut's marker.
//
// Bound: the result's size, counted as above, is at most MaxBytes and its strings hold at most
// MaxLines lines whenever MaxBytes is at least 512; below that, a cut string keeps at most
// max(its share, minMaxBytes) plus its marker. Value applied to its own result changes nothing.
// Both are fuzz-tested with MaxBytes >= 512.
//
// Cost: values within the budget are measured until the budget is passed, and returned as they
// are (maps, lists, strings and numbers without allocating). A cut string costs one newline count plus work and memory proportional
// to what is kept; elements left out are walked once for Stats. Containers on the path to a change
// are copied (copy-on-write); everything else is shared with v.
func Value(v any, cfg Config, note func(Cut) string) (any, Stats) {
	cfg = cfg.WithDefaults()
	z := sizer{capB: cfg.MaxBytes}
	z.walk(v, 0)
	if !z.over() && !z.nonFinite && z.lines <= cfg.MaxLines {
		return v, Stats{OriginalBytes: z.bytes, KeptBytes: z.bytes, OriginalLines: z.lines}
	}
	var f fitter
	var out any
	out = f.fit(v, cfg.MaxBytes, cfg.MaxLines, 0, func(s string) { out = s })
	jobs := f.jobs[:0]
	for _, j := range f.jobs {
		if j.omitted == nil {
			jobs = append(jobs, j)
			continue
		}
		// Elements left out are reported, as JSON, only to a caller that stores them.
		if note == nil {
			continue
		}
		js, err := j.omitted()
		if err != nil {
			continue // their marker names no artifact
		}
		j.cut.Bytes = js
		jobs = append(jobs, j)
	}
	for i := range jobs {
		j := &jobs[i]
		j.cut.Index, j.cut.Count = i, len(jobs)
		n := ""
		if note != nil {
			n = note(j.cut)
		}
		if j.omitted != nil {
			j.set(markerWithNote(j.marker, n))
			continue
		}
		var s string
		var st Stats
		if j.cut.Bytes != nil {
			s, st = cutText(j.cut.Bytes, j.cfg, n, j.newlines)
		} else {
			s, st = cutText(j.cut.Text, j.cfg, n, j.newlines)
		}
		j.set(s)
		f.stats.add(st)
	}
	// Over the limits, or holding what cannot pass as it is: something was cut, left out or
	// replaced by its JSON text or its text.
	f.stats.Truncated = true
	f.stats.KeptBytes = f.stats.OriginalBytes - f.stats.OmittedBytes
	return out, f.stats
}

// sizer measures a value's JSON size (see Value) and the lines of its strings, stopping as soon as
// the size passes capB.
type sizer struct {
	capB         int
	bytes, lines int
	// bad: the value holds something Value cannot pass through as it is (containers nested
	// deeper than maxDepth, more than maxNodes values, a value encoding/json rejects).
	bad   bool
	nodes int
	// nonFinite: the value holds a NaN or an infinite float, which Value replaces by its text
	// (as long as the number's; measured as that string, a line).
	nonFinite bool
}

func (z *sizer) over() bool { return z.bad || z.bytes > z.capB }

func (z *sizer) walk(v any, depth int) {
	if z.over() {
		return
	}
	if z.nodes++; z.nodes > maxNodes {
		z.bad = true
		return
	}
	switch v.(type) {
	case map[string]any, []any, []string, map[string]string:
		if depth > maxDepth {
			z.bad = true
			return
		}
	}
	switch x := v.(type) {
	case string:
		z.bytes += len(x)
		if z.bytes <= z.capB {
			z.lines += countLines(x)
		}
	case []byte:
		z.bytes += len(x)
		if z.bytes <= z.capB {
			z.lines += linesOf(x, bytes.Count(x, []byte{'\n'}))
		}
	case map[string]any:
		z.bytes += 2
		for k, e := range x {
			z.bytes += len(k) + 4
			z.walk(e, depth+1)
			if z.over() {
				return
			}
		}
	case []any:
		z.bytes += 2 + len(x)
		for _, e := range x {
			z.walk(e, depth+1)
			if z.over() {
				return
			}
		}
	case []string:
		z.bytes += 2 + len(x)
		for _, e := range x {
			z.bytes += len(e)
			if z.over() {
				return
			}
			z.lines += countLines(e)
		}
	case map[string]string:
		z.bytes += 2
		for k, e := range x {
			z.bytes += len(k) + 4 + len(e)
			if z.over() {
				return
			}
			z.lines += countLines(e)
		}
	default:
		if n, ok := scalarLen(v); ok {
			z.bytes += n
			if _, bad := nonFiniteText(v); bad {
				z.nonFinite = true
				if z.bytes <= z.capB {
					z.lines++ // as the string it becomes
				}
			}
			return
		}
		// Another Go type: measured as Value would cut it, in its JSON form.
		native, err := jsonForm(v)
		if err != nil {
			z.bad = true
			return
		}
		z.walk(native, depth)
	}
}

// jsonForm returns v of another Go type as Value cuts it: its JSON text decoded into maps and
// slices (numbers as json.Number), or the JSON text itself ([]byte) when it is longer than
// maxDecodeBytes.
func jsonForm(v any) (any, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(js) > maxDecodeBytes {
		return js, nil
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var native any
	if err := dec.Decode(&native); err != nil {
		return js, nil
	}
	return native, nil
}

// scalarLen returns the JSON length of a number, bool or nil.
func scalarLen(v any) (int, bool) {
	var buf [32]byte
	switch x := v.(type) {
	case nil:
		return 4, true
	case bool:
		if x {
			return 4, true
		}
		return 5, true
	case float64:
		return len(strconv.AppendFloat(buf[:0], x, 'g', -1, 64)), true
	case float32:
		return len(strconv.AppendFloat(buf[:0], float64(x), 'g', -1, 32)), true
	case int:
		return len(strconv.AppendInt(buf[:0], int64(x), 10)), true
	case int64:
		return len(strconv.AppendInt(buf[:0], x, 10)), true
	case int32:
		return len(strconv.AppendInt(buf[:0], int64(x), 10)), true
	case uint64:
		return len(strconv.AppendUint(buf[:0], x, 10)), true
	case uint:
		return len(strconv.AppendUint(buf[:0], uint64(x), 10)), true
	case json.Number:
		return len(x), true
	}
	return 0, false
}

// nonFiniteText returns the text of a NaN or infinite float64 or float32 as strconv writes it
// ("NaN", "+Inf", "-Inf"; scalarLen's length), and whether v is one. JSON has no such number:
// encoding/json refuses it, and with it the whole tool result.
func nonFiniteText(v any) (string, bool) {
	var x float64
	switch f := v.(type) {
	case float64:
		x = f
	case float32:
		x = float64(f)
	default:
		return "", false
	}
	if !math.IsNaN(x) && !math.IsInf(x, 0) {
		return "", false
	}
	return strconv.FormatFloat(x, 'g', -1, 64), true
}

// fitter cuts a value that is over its budget. Leaves to cut are collected as jobs and cut once
// every cut is decided, so that note knows their number.
type fitter struct {
	jobs  []job
	path  []string // JSON Pointer segments of the element being fitted
	stats Stats
}

type job struct {
	cut      Cut
	cfg      Config // effective limits of the leaf
	newlines int
	set      func(string) // stores the cut text (or the omitted-marker) in the copied container
	// omitted, for elements left out: their JSON and the marker to write with its note.
	omitted func() ([]byte, error)
	marker  string
}

// fit returns v cut to capB bytes and capL lines. A leaf to cut is returned as it is (a
// placeholder) and replaced through set once every cut is decided.
func (f *fitter) fit(v any, capB, capL, depth int, set func(string)) any {
	capB, capL = max(capB, minMaxBytes), max(capL, minMaxLines)
	switch x := v.(type) {
	case string:
		return f.leaf(Cut{Text: x}, capB, capL, set)
	case []byte:
		return f.leaf(Cut{Bytes: x}, capB, capL, set)
	case map[string]any, []any, []string, map[string]string:
		if depth <= maxDepth {
			return f.container(v, capB, capL, depth)
		}
		if n := 0; !countNodes(v, 0, &n) {
			return f.omit(v, "a value nested more than "+strconv.Itoa(maxDepth)+" levels deep, with a cycle or more than "+
				strconv.Itoa(maxNodes)+" values,")
		}
		return f.encoded(v, capB, capL, set)
	}
	if text, ok := nonFiniteText(v); ok {
		f.stats.OriginalBytes += len(text)
		f.stats.OriginalLines++
		f.stats.NumbersReplaced++
		return text
	}
	if _, ok := scalarLen(v); ok {
		f.keep(v)
		return v
	}
	native, err := jsonForm(v)
	if err != nil {
		return f.omit(v, fmt.Sprintf("a value of type %T that cannot be encoded as JSON", v))
	}
	if js, ok := native.([]byte); ok {
		return f.leaf(Cut{Bytes: js}, capB, capL, set)
	}
	return f.fit(native, capB, capL, depth, set)
}

// encoded replaces a container nested too deep by its JSON text, cut.
func (f *fitter) encoded(v any, capB, capL int, set func(string)) any {
	js, err := json.Marshal(v)
	if err != nil {
		return f.omit(v, fmt.Sprintf("a value of type %T that cannot be encoded as JSON", v))
	}
	return f.leaf(Cut{Bytes: js}, capB, capL, set)
}

// countNodes reports whether v holds at most maxNodes values (n counts them), so that encoding it
// terminates in bounded time.
func countNodes(v any, depth int, n *int) bool {
	*n++
	if *n > maxNodes || depth > 10_000 {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !countNodes(e, depth+1, n) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !countNodes(e, depth+1, n) {
				return false
			}
		}
	case []string:
		*n += len(x)
	case map[string]string:
		*n += len(x)
	}
	return *n <= maxNodes
}

// omit returns the marker string that replaces v; nothing of v is kept.
func (f *fitter) omit(v any, what string) any {
	var d dropped
	d.walk(v, 0)
	f.stats.OriginalBytes += d.bytes
	f.stats.OriginalLines += d.lines
	f.stats.OmittedBytes += d.bytes
	f.stats.OmittedLines += d.lines
	f.stats.ItemsOmitted++
	return MarkerPrefix + what + " omitted ...]"
}

// keep counts v, kept whole, in the stats.
func (f *fitter) keep(v any) {
	z := sizer{capB: math.MaxInt}
	z.walk(v, 0)
	f.stats.OriginalBytes += z.bytes
	f.stats.OriginalLines += z.lines
}

// leaf returns a string, []byte or JSON text cut to capB bytes and capL lines: whole (as a
// string) when it fits, else the original as a placeholder, with a job to cut it. Its newlines
// are counted here, once.
func (f *fitter) leaf(c Cut, capB, capL int, set func(string)) any {
	var n, newlines, lines int
	var orig any
	if c.Bytes != nil {
		n, newlines = len(c.Bytes), countNewlines(c.Bytes)
		lines, orig = linesOf(c.Bytes, newlines), c.Bytes
	} else {
		n, newlines = len(c.Text), countNewlines(c.Text)
		lines, orig = linesOf(c.Text, newlines), c.Text
	}
	if n <= capB && lines <= capL {
		f.stats.OriginalBytes += n
		f.stats.OriginalLines += lines
		if c.Bytes != nil {
			return string(c.Bytes)
		}
		return c.Text
	}
	c.Path = f.pointer()
	f.jobs = append(f.jobs, job{cut: c, cfg: Config{MaxBytes: capB, MaxLines: capL}, newlines: newlines, set: set})
	return orig
}

// pointer returns the JSON Pointer of the element being fitted.
func (f *fitter) pointer() string {
	escape := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, seg := range f.path {
		b.WriteByte('/')
		b.WriteString(escape.Replace(seg))
	}
	return b.String()
}

// elements gives uniform access to the elements of the four container shapes.
type elements struct {
	keys []string // sorted map keys; nil for lists
	n    int
	at   func(i int) any
}

func elementsOf(v any) elements {
	switch x := v.(type) {
	case map[string]any:
		keys := sortedKeys(x)
		return elements{keys: keys, n: len(keys), at: func(i int) any { return x[keys[i]] }}
	case map[string]string:
		keys := sortedKeys(x)
		return elements{keys: keys, n: len(keys), at: func(i int) any { return x[keys[i]] }}
	case []any:
		return elements{n: len(x), at: func(i int) any { return x[i] }}
	case []string:
		return elements{n: len(x), at: func(i int) any { return x[i] }}
	}
	return elements{at: func(int) any { return nil }}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// overhead is the JSON text an element adds besides its value: `"key":` and a comma.
func (e elements) overhead(i int) int {
	if e.keys != nil {
		return len(e.keys[i]) + 4
	}
	return 1
}

// container fits a map or list (over its budget) to capB bytes and capL lines.
func (f *fitter) container(v any, capB, capL, depth int) any {
	el := elementsOf(v)
	budget := capB - 2 // brackets
	// The floor share of an element: minShareBytes / minShareLines, less when the first and the
	// last element would not both get one, but never less than a cut leaf needs to keep its
	// marker (minCutBytes, minMaxLines): below that, elements are left out.
	floorB, floorL := minCutBytes(), max(min(minShareLines, capL/2), minMaxLines)
	if el.n > 0 {
		floorB = max(min(minShareBytes, (budget-el.overhead(0)-el.overhead(el.n-1))/2), floorB)
	}
	head, tail, marker := keptRange(el, budget, capL, depth, floorB, floorL)
	kept := make([]int, 0, head+tail)
	for i := range head {
		kept = append(kept, i)
	}
	for i := el.n - tail; i < el.n; i++ {
		kept = append(kept, i)
	}

	// Share the budget between the kept elements.
	sizes, lines := make([]int, len(kept)), make([]int, len(kept))
	refit := make([]bool, len(kept)) // holds what cannot pass as it is, within its share or not
	room, lineRoom := budget, capL
	if marker != "" {
		room -= markerRoom(marker)
		lineRoom--
	}
	for j, i := range kept {
		room -= el.overhead(i)
		z := sizer{capB: budget}
		z.walk(el.at(i), depth+1)
		sizes[j], lines[j], refit[j] = z.bytes, z.lines, z.bad || z.nonFinite
		if z.over() {
			// Unknown beyond the budget: it may need all it can get.
			sizes[j], lines[j] = max(sizes[j], budget+1), capL+1
		}
	}
	capEach, capLines := shareBudget(sizes, lines, max(room, 0), max(lineRoom, 0), floorB, floorL, markerReserve())
	f.stats.OriginalBytes += 2

	// Build the copy: kept elements, fitted when over their share, and the marker (in a list,
	// between head and tail).
	c := newCopy(v, el, kept, head, tail, marker != "")
	if marker != "" {
		c.setMarker(marker)
		f.jobs = append(f.jobs, job{cut: Cut{Path: f.pointer(), Omitted: el.n - head - tail}, set: c.setMarker, omitted: c.omitted, marker: marker})
	}
	for j, i := range kept {
		e := el.at(i)
		f.stats.OriginalBytes += el.overhead(i)
		if refit[j] || sizes[j] > capEach || lines[j] > capLines {
			f.path = append(f.path, segment(el, i))
			c.put(j, f.fit(e, capEach, capLines, depth+1, c.setter(j)))
			f.path = f.path[:len(f.path)-1]
		} else {
			f.stats.OriginalBytes += sizes[j]
			f.stats.OriginalLines += lines[j]
			c.put(j, e)
		}
	}
	// Elements left out.
	for i := head; i < el.n-tail; i++ {
		var d dropped
		d.walk(el.at(i), depth+1)
		d.bytes += el.overhead(i)
		f.stats.OriginalBytes += d.bytes
		f.stats.OriginalLines += d.lines
		f.stats.OmittedBytes += d.bytes
		f.stats.OmittedLines += d.lines
		f.stats.ItemsOmitted++
	}
	return c.out
}

// keptRange decides which elements of a container stay: all when each can get its size or its
// floor share (floorB, floorL) within budget and capL lines; otherwise the first head and the
// last tail ones, taken alternately from the end and the start while their floor shares fit
// beside the omitted-marker, which it returns ("" when nothing is left out).
func keptRange(el elements, budget, capL, depth, floorB, floorL int) (head, tail int, marker string) {
	needB, needL := 0, 0
	fits := func(i, roomB, roomL int) bool {
		z := sizer{capB: floorB}
		z.walk(el.at(i), depth+1)
		b, l := min(z.bytes, floorB), min(z.lines, floorL)
		if z.over() {
			// To be cut (or replaced by its JSON text, cut): a marker line between a head and a
			// tail line at least.
			b, l = floorB, floorL
		}
		needB += b + el.overhead(i)
		needL += l
		return needB <= roomB && needL <= roomL
	}
	keepAll := true
	for i := 0; i < el.n && keepAll; i++ {
		keepAll = fits(i, budget, capL)
	}
	if keepAll {
		return el.n, 0, ""
	}
	marker = omittedMarker(el.n, el.n, el.keys != nil)
	roomB, roomL := budget-markerRoom(marker), capL-1
	needB, needL = 0, 0
	for head+tail < el.n {
		i := el.n - 1 - tail
		if (head+tail)%2 == 1 {
			i = head
		}
		if !fits(i, roomB, roomL) {
			break
		}
		if i == head {
			head++
		} else {
			tail++
		}
	}
	if head+tail == el.n {
		return head, tail, ""
	}
	return head, tail, omittedMarker(el.n-head-tail, el.n, el.keys != nil)
}

// containerCopy is the copy of a container being built: put stores kept element j, setter
// returns how to store it cut later, setMarker stores the omitted-marker and omitted returns
// the elements left out, as JSON.
type containerCopy struct {
	out       any
	put       func(j int, v any)
	setter    func(j int) func(string)
	setMarker func(string)
	omitted   func() ([]byte, error)
}

// newCopy makes the copy of container v (elements el) that keeps the elements kept: its first
// head and last tail elements, with room for the omitted-marker (in a list, between them) when
// marked.
func newCopy(v any, el elements, kept []int, head, tail int, marked bool) *containerCopy {
	c := &containerCopy{}
	pos := func(j int) int {
		if marked && j >= head {
			return j + 1
		}
		return j
	}
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(kept)+1)
		c.put = func(j int, v any) { m[el.keys[kept[j]]] = v }
		c.setter = func(j int) func(string) { k := el.keys[kept[j]]; return func(s string) { m[k] = s } }
		key := freeKey(x)
		c.setMarker = func(s string) { m[key] = s }
		c.omitted = func() ([]byte, error) { return json.Marshal(subMap(x, el.keys[head:el.n-tail])) }
		c.out = m
	case map[string]string:
		m := make(map[string]string, len(kept)+1)
		c.put = func(j int, v any) { m[el.keys[kept[j]]] = v.(string) }
		c.setter = func(j int) func(string) { k := el.keys[kept[j]]; return func(s string) { m[k] = s } }
		key := freeKey(x)
		c.setMarker = func(s string) { m[key] = s }
		c.omitted = func() ([]byte, error) { return json.Marshal(subMap(x, el.keys[head:el.n-tail])) }
		c.out = m
	case []any:
		l := make([]any, pos(len(kept)))
		c.put = func(j int, v any) { l[pos(j)] = v }
		c.setter = func(j int) func(string) { return func(s string) { l[pos(j)] = s } }
		c.setMarker = func(s string) { l[head] = s }
		c.omitted = func() ([]byte, error) { return json.Marshal(x[head : el.n-tail]) }
		c.out = l
	case []string:
		l := make([]string, pos(len(kept)))
		c.put = func(j int, v any) { l[pos(j)] = v.(string) }
		c.setter = func(j int) func(string) { return func(s string) { l[pos(j)] = s } }
		c.setMarker = func(s string) { l[head] = s }
		c.omitted = func() ([]byte, error) { return json.Marshal(x[head : el.n-tail]) }
		c.out = l
	}
	return c
}

func segment(el elements, i int) string {
	if el.keys != nil {
		return el.keys[i]
	}
	return strconv.Itoa(i)
}

// freeKey returns the key of the omitted-entries marker: "...", lengthened until it is not a key
// of m.
func freeKey[V any](m map[string]V) string {
	k := omittedKey
	for {
		if _, taken := m[k]; !taken {
			return k
		}
		k += "."
	}
}

// markerRoom is what the omitted-marker takes in a container: the marker with the longest note,
// and the key and separators of a map entry.
func markerRoom(marker string) int {
	return len(marker) + len("; ") + maxNoteBytes + len(omittedKey) + 5
}

// markerWithNote adds a note to an omitted-marker.
func markerWithNote(marker, note string) string {
	if note = cleanNote(note); note == "" {
		return marker
	}
	return strings.TrimSuffix(marker, " ...]") + "; " + note + " ...]"
}

func subMap[V any](m map[string]V, keys []string) map[string]V {
	out := make(map[string]V, len(keys))
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

func omittedMarker(omitted, total int, entries bool) string {
	what := " items"
	if entries {
		what = " entries"
	}
	return MarkerPrefix + strconv.Itoa(omitted) + " of " + strconv.Itoa(total) + what + " omitted ...]"
}

// markerReserve returns the most a marker line (note included) adds to a cut string.
func markerReserve() int {
	return len(cutMarker(math.MaxInt32, math.MaxInt, math.MaxInt32, math.MaxInt, "")) + len("; ") + maxNoteBytes + 2
}

// minCutBytes is the smallest share within which Text keeps a cut leaf: its marker and a little
// of its head and tail.
func minCutBytes() int { return markerReserve() + minContentBytes }

// dropped measures an element left out, for Stats: its JSON size and the lines of its strings,
// as far as maxNodes values.
type dropped struct {
	bytes, lines, nodes int
}

func (d *dropped) walk(v any, depth int) {
	d.nodes++
	if d.nodes > maxNodes || depth > 10_000 {
		return
	}
	switch x := v.(type) {
	case string:
		d.bytes += len(x)
		d.lines += countLines(x)
	case []byte:
		d.bytes += len(x)
		d.lines += linesOf(x, bytes.Count(x, []byte{'\n'}))
	case map[string]any:
		d.bytes += 2
		for k, e := range x {
			d.bytes += len(k) + 4
			d.walk(e, depth+1)
		}
	case []any:
		d.bytes += 2 + len(x)
		for _, e := range x {
			d.walk(e, depth+1)
		}
	case []string:
		d.bytes += 2 + len(x)
		for _, e := range x {
			d.bytes += len(e)
			d.lines += countLines(e)
		}
	case map[string]string:
		d.bytes += 2
		for k, e := range x {
			d.bytes += len(k) + 4 + len(e)
			d.lines += countLines(e)
		}
	default:
		z := sizer{capB: math.MaxInt}
		z.walk(v, 0)
		d.bytes += z.bytes
		d.lines += z.lines
	}
}

// shareBudget returns the per-element byte and line caps. A cut string can gain bytes (its
// marker line) and lines (the marker, and a line split between head and tail), so the caps are
// recomputed with those gains counted for the elements they cut, until no new element is cut
// (usually after one or two rounds). The cut value then stays within the limits, and Value
// applied to it again changes nothing.
func shareBudget(sizes, lines []int, maxBytes, maxLines, floorB, floorL, markerMax int) (capBytes, capLines int) {
	needB, needL := slices.Clone(sizes), slices.Clone(lines)
	for range 16 {
		capBytes = fairCap(needB, maxBytes, floorB)
		capLines = fairCap(needL, maxLines, floorL)
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
