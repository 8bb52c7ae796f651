package corpus

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
)

// oldAge is how many steps back counts as long ago: what a compaction may have summarized.
const oldAge = 20

// explore spends n steps reading around what the session has seen: the matches of earlier
// greps, definitions of names in the code read, callers, tests, neighbouring files. Some of it
// goes back to things seen long before, as agents do when they return to an early lead.
func (a *shellAgent) explore(ctx context.Context, n int) error {
	kinds := []struct {
		name   string
		weight int
	}{
		{"openHit", 30}, {"definition", 18}, {"more", 10}, {"uses", 12}, {"tests", 7},
		{"outline", 7}, {"head", 4}, {"cat", 8}, {"ls", 3}, {"wc", 1}, {"doc", 3},
	}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	for done := 0; done < n && a.calls() < 140; {
		before := len(a.steps)
		ok := false
		if a.format == FormatToolCall && a.chance(a.p.parallel) {
			var err error
			if ok, err = a.pairOfHits(ctx); err != nil {
				return err
			}
		}
		for try := 0; try < 12 && !ok; try++ {
			r := a.rng.IntN(total)
			kind := kinds[0].name
			for _, k := range kinds {
				if r < k.weight {
					kind = k.name
					break
				}
				r -= k.weight
			}
			var err error
			ok, err = a.exploreOne(ctx, kind, n-done)
			if err != nil {
				return err
			}
		}
		if !ok {
			return nil // nothing left worth reading
		}
		done += len(a.steps) - before
	}
	return nil
}

// pickAged picks a key: with probability oldRef one last seen at least oldAge steps ago, else
// one of the newest. Most of the time it keeps to keys the work is about (prefer), as agents
// stay near the code of the failure.
func (a *shellAgent) pickAged(items []aged, ok func(string) bool, prefer func(string) bool) (string, bool) {
	if prefer != nil && a.chance(0.8) {
		if k, found := a.pickAged(items, func(k string) bool { return ok(k) && prefer(k) }, nil); found {
			return k, true
		}
	}
	now := len(a.steps)
	var old, recent []aged
	for _, it := range items {
		if !ok(it.key) {
			continue
		}
		if now-it.step >= oldAge {
			old = append(old, it)
		} else {
			recent = append(recent, it)
		}
	}
	if len(old) > 0 && (len(recent) == 0 || a.chance(a.p.oldRef)) {
		return old[a.rng.IntN(len(old))].key, true
	}
	if len(recent) > 0 {
		return recent[a.rng.IntN(min(len(recent), 4))].key, true
	}
	return "", false
}

// learn adds the names a function uses and its file to what the work is about.
func (a *shellAgent) learn(f *funcInfo) {
	if f == nil {
		return
	}
	a.relFiles[f.file.path] = true
	for _, n := range append(slices.Clip(f.calls), f.idents...) {
		if a.specific(n) {
			a.relNames[n] = true
			for _, g := range a.idx.funcsNamed(n) {
				a.relFiles[g.file.path] = true
			}
		}
	}
}

func (a *shellAgent) relevantName(n string) bool { return a.relNames[n] }
func (a *shellAgent) relevantFile(p string) bool { return a.relFiles[p] }

// unexplained excludes, before the agent has traced the failure, the functions on the way to it:
// the trace reads them in order.
func (a *shellAgent) unexplained(n string) bool {
	if a.traced {
		return true
	}
	for _, f := range a.chainTo() {
		if f.name == n {
			return false
		}
	}
	return true
}

func (a *shellAgent) isOld(step int) bool { return len(a.steps)-step >= oldAge }

// commonMethods are method names so common that grepping for them finds everything.
var commonMethods = map[string]bool{
	"String": true, "Error": true, "Len": true, "Less": true, "Swap": true, "Type": true, "Name": true,
	"Value": true, "Values": true, "Key": true, "Index": true, "Equal": true, "Format": true, "Write": true,
	"Read": true, "Close": true, "Reset": true, "Get": true, "Set": true, "Next": true, "Init": true,
	"Run": true, "Clone": true, "Copy": true, "Kind": true, "Elem": true, "Option": true, "Enabled": true,
}

// specific reports whether a name is worth looking up: declared once or twice in the module,
// and not one of the common method names.
func (a *shellAgent) specific(name string) bool {
	n := len(a.idx.funcsNamed(name))
	if a.idx.types[name] != nil {
		n++
	}
	return n > 0 && n <= maxDefinitions && !commonMethods[name]
}

// lookAlike checks, after the fix, for the same mistake elsewhere: the condition itself, the
// callers and the tests of the fixed function; then more reading if the session is short.
func (a *shellAgent) lookAlike(ctx context.Context, n int) error {
	b := a.bug
	start := len(a.steps)
	if n > 0 && b.expr != "" && !strings.ContainsAny(b.expr, "\"'`") {
		if _, err := a.run1(ctx, a.thought("", fmt.Sprintf("Let me check whether the condition %s appears anywhere else.", code(b.expr))),
			shellAction{command: fmt.Sprintf("grep -rn -F \"%s\" --include=*.go .", b.expr), kind: "grep"}); err != nil {
			return err
		}
	}
	if len(a.steps)-start < n && !a.usesSeen[b.fn.name] {
		a.usesSeen[b.fn.name] = true
		if _, err := a.run1(ctx, a.thought("", fmt.Sprintf("Who calls %s? The callers should be fine with the corrected behaviour.", code(b.fn.name))),
			shellAction{command: usesCmd(b.fn.name, "."), kind: "grep", name: b.fn.name}); err != nil {
			return err
		}
	}
	if len(a.steps)-start < n || len(a.steps) < 60 || a.chance(0.7) {
		if err := a.earlyHit(ctx); err != nil {
			return err
		}
	}
	return a.explore(ctx, n-(len(a.steps)-start))
}

// earlyHit goes back to a match of one of the first greps, in a file not shown since: a call
// site to check against the fix, named only in an output many steps back.
func (a *shellAgent) earlyHit(ctx context.Context) error {
	var cands, seenSince []seenHit
	for _, h := range a.mem.hits {
		if len(a.steps)-h.step < min(25, len(a.steps)/2) || a.mem.opened[h.key()] || h.path == a.bug.file {
			continue
		}
		if a.mem.files[h.path] <= h.step {
			cands = append(cands, h)
		} else {
			seenSince = append(seenSince, h)
		}
	}
	if len(cands) == 0 {
		cands = seenSince // in a small package every file comes up again
	}
	if len(cands) == 0 {
		return nil
	}
	h := cands[a.rng.IntN(min(len(cands), 5))] // among the earliest
	a.mem.opened[h.key()] = true
	why := fmt.Sprintf("One of the first searches also matched %s", code(h.key()))
	if h.text != "" && len(h.text) < 90 && !strings.Contains(h.text, "`") {
		why += fmt.Sprintf(" (%s)", code(h.text))
	}
	_, err := a.run1(ctx, a.thought(why+".", "Let me make sure that place is consistent with the fix."),
		a.view(h.path, h.line-a.between(5, 12), h.line+a.between(8, 20)))
	return err
}

func (a *shellAgent) exploreOne(ctx context.Context, kind string, left int) (bool, error) {
	switch kind {
	case "openHit":
		return a.openHit(ctx)
	case "definition":
		return a.definition(ctx, left)
	case "more":
		return a.readMore(ctx)
	case "uses":
		return a.uses(ctx)
	case "tests":
		return a.testsOf(ctx)
	case "outline":
		return a.outline(ctx)
	case "head":
		return a.head(ctx)
	case "cat":
		return a.cat(ctx)
	case "ls":
		return a.ls(ctx)
	case "wc":
		return a.wc(ctx)
	case "doc":
		return a.doc(ctx)
	}
	return false, nil
}

// openHit reads the code around a match an earlier output listed.
func (a *shellAgent) openHit(ctx context.Context) (bool, error) {
	latest := map[string]seenHit{}
	for _, h := range a.mem.hits {
		latest[h.key()] = h
	}
	items := make([]aged, 0, len(latest))
	for k, h := range latest {
		items = append(items, aged{k, h.step})
	}
	slices.SortFunc(items, func(x, y aged) int {
		if x.step != y.step {
			return y.step - x.step
		}
		return strings.Compare(x.key, y.key)
	})
	key, ok := a.pickAged(items, func(k string) bool {
		h := latest[k]
		return !a.mem.opened[k] && !a.mem.seenLines(h.path, h.line, h.line)
	}, func(k string) bool { return a.relevantFile(latest[k].path) })
	if !ok {
		return false, nil
	}
	h := latest[key]
	a.mem.opened[key] = true
	act := a.view(h.path, h.line-a.between(5, 15), h.line+a.between(a.p.window[0]/2, a.p.window[1]/2))
	var why string
	if a.isOld(h.step) {
		why = fmt.Sprintf("Going back to a match from earlier: %s", code(h.key()))
		if h.text != "" && len(h.text) < 90 && !strings.Contains(h.text, "`") {
			why += fmt.Sprintf(" (%s)", code(h.text))
		}
		why += "."
	} else {
		why = fmt.Sprintf("The match at %s looks relevant.", code(h.key()))
	}
	_, err := a.run1(ctx, a.thought(why, a.pick(
		"Let me look at the code around it.",
		"I'll read the surrounding lines to see how it is used.",
		"Let me check the context there.",
	)), act)
	return true, err
}

// pairOfHits reads around two matches in one step, as two calls of the tool-call form.
func (a *shellAgent) pairOfHits(ctx context.Context) (bool, error) {
	var picked []seenHit
	seenFile := map[string]bool{}
	for i := len(a.mem.hits) - 1; i >= 0 && len(picked) < 2; i-- {
		h := a.mem.hits[i]
		if a.mem.opened[h.key()] || seenFile[h.path] || a.mem.seenLines(h.path, h.line, h.line) {
			continue
		}
		seenFile[h.path] = true
		picked = append(picked, h)
	}
	if len(picked) < 2 {
		return false, nil
	}
	var acts []shellAction
	var where []string
	for _, h := range picked {
		a.mem.opened[h.key()] = true
		acts = append(acts, a.view(h.path, h.line-a.between(5, 12), h.line+a.between(15, 40)))
		where = append(where, code(h.key()))
	}
	_, err := a.run(ctx, a.thought("", fmt.Sprintf("Let me read around %s and %s at the same time.", where[0], where[1])), acts...)
	return true, err
}

// definition looks up a function or type named in an output.
func (a *shellAgent) definition(ctx context.Context, left int) (bool, error) {
	name, ok := a.pickAged(agedOf(a.mem.idents), func(k string) bool { return !a.defSeen[k] && a.specific(k) && a.unexplained(k) }, a.relevantName)
	if !ok {
		return false, nil
	}
	a.defSeen[name] = true
	old := a.isOld(a.mem.idents[name])
	if fs := a.idx.funcsNamed(name); len(fs) > 0 {
		f := fs[0]
		why := fmt.Sprintf("%s came up in the code I read.", code(name))
		if old {
			why = fmt.Sprintf("%s appeared much earlier and I have not read it yet.", code(name))
		}
		if left < 2 || f.size() > 150 {
			_, err := a.run1(ctx, a.thought(why, fmt.Sprintf("Let me see where %s is defined.", code(name))), a.grepDef(name, f.recv != "", false))
			return true, err
		}
		return true, a.lookUp(ctx, f, why)
	}
	sf := a.idx.types[name]
	if sf == nil {
		return false, nil
	}
	g, err := a.run1(ctx, a.thought(fmt.Sprintf("The type %s is used here.", code(name)), "Let me find its declaration."), a.grepDef(name, false, true))
	if err != nil || left < 2 {
		return true, err
	}
	p, line, ok := firstHit(g.output, a.idx, a.focusDir)
	if !ok {
		return true, nil
	}
	_, err = a.run1(ctx, a.thought("", fmt.Sprintf("Reading the declaration of %s in %s.", code(name), code(p))), a.view(p, line-a.between(2, 6), line+a.between(15, 40)))
	return true, err
}

// readMore continues reading a file past the last lines shown.
func (a *shellAgent) readMore(ctx context.Context) (bool, error) {
	act := a.lastView()
	if act.file == "" {
		return false, nil
	}
	n := a.fileLen(act.file)
	if act.to >= n || a.mem.seenLines(act.file, act.to+1, min(act.to+10, n)) {
		return false, nil
	}
	w := a.between(a.p.window[0], a.p.window[1])
	_, err := a.run1(ctx, a.thought("", a.pick(
		fmt.Sprintf("Let me continue reading %s.", code(act.file)),
		fmt.Sprintf("I need to see what comes after line %d of %s.", act.to, code(path.Base(act.file))),
		"Let me see the rest of this section.",
	)), a.view(act.file, act.to+1, act.to+w))
	return true, err
}

func (a *shellAgent) lastView() shellAction {
	for i := len(a.steps) - 1; i >= 0 && i >= len(a.steps)-3; i-- {
		for _, act := range a.steps[i].actions {
			if act.kind == "view" {
				return act
			}
		}
	}
	return shellAction{}
}

// uses greps for the callers of a function seen earlier.
func (a *shellAgent) uses(ctx context.Context) (bool, error) {
	name, ok := a.pickAged(agedOf(a.mem.idents), func(k string) bool {
		return len(a.idx.funcsNamed(k)) > 0 && a.specific(k) && !a.usesSeen[k]
	}, a.relevantName)
	if !ok {
		return false, nil
	}
	root := "."
	if a.focusDir != "." && a.chance(0.5) {
		root = a.focusDirSlash()
	}
	why := fmt.Sprintf("I want to know who else calls %s.", code(name))
	if a.isOld(a.mem.idents[name]) {
		why = fmt.Sprintf("Coming back to %s, which I saw earlier: who else calls it?", code(name))
	}
	a.usesSeen[name] = true
	cmd := usesCmd(name, root)
	switch r := a.rng.Float64(); {
	case r < 0.3:
		cmd = fmt.Sprintf("grep -rn \"%s\" %s", name, root) // everything, tests and comments included
	case r < 0.45:
		cmd = fmt.Sprintf("grep -rn -B2 -A6 \"%s(\" --include=*.go %s | head -n 200", name, root) // with context
	}
	_, err := a.run1(ctx, a.thought(why, "Searching for its uses."), shellAction{command: cmd, kind: "grep", name: name})
	return true, err
}

func usesCmd(name, root string) string {
	return fmt.Sprintf("grep -rn \"%s(\" --include=*.go %s | grep -v \"func \" | head -n 50", name, root)
}

// testsOf looks for the tests that mention a function.
func (a *shellAgent) testsOf(ctx context.Context) (bool, error) {
	name, ok := a.pickAged(agedOf(a.mem.idents), func(k string) bool {
		fs := a.idx.funcsNamed(k)
		return len(fs) > 0 && a.specific(k) && !a.ran[testsCmd(k, fs[0].file.dir)]
	}, a.relevantName)
	if !ok {
		return false, nil
	}
	dir := a.idx.funcsNamed(name)[0].file.dir
	if len(a.idx.pkgs[dir].testFiles) == 0 {
		return false, nil
	}
	_, err := a.run1(ctx, a.thought("", fmt.Sprintf("Let me check which tests exercise %s.", code(name))),
		shellAction{command: testsCmd(name, dir), kind: "grep", name: name})
	return true, err
}

func testsCmd(name, dir string) string {
	d := dir + "/"
	if dir == "." {
		d = ""
	}
	return fmt.Sprintf("grep -n \"%s\" %s*_test.go | head -n 20", name, d)
}

// seenFile picks a file named in an output.
func (a *shellAgent) seenFile(ok func(string) bool) (string, bool) {
	return a.pickAged(agedOf(a.mem.files), ok, a.relevantFile)
}

func (a *shellAgent) outline(ctx context.Context) (bool, error) {
	f, ok := a.seenFile(func(p string) bool {
		return !a.ran["grep -n \"^func \" "+p] && !a.ran["grep -n \"^func \" "+displayRoot+"/"+p]
	})
	if !ok {
		return false, nil
	}
	why := ""
	if a.isOld(a.mem.files[f]) {
		why = fmt.Sprintf("%s was listed earlier.", code(f))
	}
	_, err := a.run1(ctx, a.thought(why, fmt.Sprintf("Let me get an outline of the functions in %s.", code(f))),
		shellAction{command: "grep -n \"^func \" " + a.at(f), kind: "grep", file: f})
	return true, err
}

func (a *shellAgent) head(ctx context.Context) (bool, error) {
	f, ok := a.seenFile(func(p string) bool { return !a.mem.seenLines(p, 1, 30) })
	if !ok {
		return false, nil
	}
	n := a.between(30, 60)
	if total := a.fileLen(f); total > 2*n && a.chance(0.3) {
		a.mem.markViewed(f, total-n+1, total)
		_, err := a.run1(ctx, a.thought("", fmt.Sprintf("Let me look at the end of %s.", code(f))),
			shellAction{command: fmt.Sprintf("tail -n %d %s", n, a.at(f)), kind: "view", file: f, from: total - n + 1, to: total})
		return true, err
	}
	a.mem.markViewed(f, 1, n)
	_, err := a.run1(ctx, a.thought("", fmt.Sprintf("Let me look at the top of %s for its imports and types.", code(f))),
		shellAction{command: fmt.Sprintf("head -n %d %s", n, a.at(f)), kind: "view", file: f, from: 1, to: n})
	return true, err
}

// cat prints a whole file: mostly small ones, sometimes a long one whose output is cut.
func (a *shellAgent) cat(ctx context.Context) (bool, error) {
	long := a.chance(0.4)
	f, ok := a.seenFile(func(p string) bool {
		n := a.fileLen(p)
		return !a.mem.seenLines(p, 1, n) && (n <= 160) != long
	})
	if !ok {
		return false, nil
	}
	n := a.fileLen(f)
	a.mem.markViewed(f, 1, n)
	cmd := "cat " + a.at(f)
	if a.chance(0.3) {
		cmd = "cat -n " + a.at(f)
	}
	_, err := a.run1(ctx, a.thought("", fmt.Sprintf("%s is worth reading in full.", code(f))),
		shellAction{command: cmd, kind: "view", file: f, from: 1, to: n})
	return true, err
}

func (a *shellAgent) ls(ctx context.Context) (bool, error) {
	f, ok := a.seenFile(func(p string) bool { return !a.listed[path.Dir(p)] })
	if !ok {
		return false, nil
	}
	d := path.Dir(f)
	a.listed[d] = true
	_, err := a.run1(ctx, a.thought("", fmt.Sprintf("What else is in %s?", code(d))), shellAction{command: "ls -la " + a.at(d), kind: "ls"})
	return true, err
}

func (a *shellAgent) wc(ctx context.Context) (bool, error) {
	cmd := fmt.Sprintf("wc -l %s*.go", a.focusDirSlash())
	if a.ran[cmd] {
		return false, nil
	}
	_, err := a.run1(ctx, a.thought("", "How big are the files of this package?"), shellAction{command: cmd, kind: "ls"})
	return true, err
}

// doc asks go doc about an exported function seen earlier.
func (a *shellAgent) doc(ctx context.Context) (bool, error) {
	name, ok := a.pickAged(agedOf(a.mem.idents), func(k string) bool {
		fs := a.idx.funcsNamed(k)
		return len(fs) > 0 && a.specific(k) && fs[0].recv == "" && k[0] >= 'A' && k[0] <= 'Z' && !a.ran[docCmd(fs[0].file.dir, k)]
	}, a.relevantName)
	if !ok {
		return false, nil
	}
	f := a.idx.funcsNamed(name)[0]
	_, err := a.run1(ctx, a.thought("", fmt.Sprintf("Let me read the documentation of %s.", code(name))),
		shellAction{command: docCmd(f.file.dir, name), kind: "doc", name: name})
	return true, err
}

func docCmd(dir, name string) string {
	if dir == "." {
		return "go doc . " + name
	}
	return "go doc ./" + dir + " " + name
}
