package refs

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
)

// HeadBytes bounds the task's head (see the package documentation).
const HeadBytes = 200

// Plan is what every request of a session is scored against: per step, its references and the
// user facts due, and the task's head. It depends only on the recorded session.
type Plan struct {
	// Steps holds one entry per step (model reply), in session order.
	Steps []StepPlan
	// Facts are the distinct facts of the person messages, in order of first appearance; step
	// k is due Facts[:Steps[k].FactsDue].
	Facts []string
	// Head is the task's head ("" when the session has no message to the agent).
	Head string
}

// StepPlan is what one step's request is scored on.
type StepPlan struct {
	// Turn is the index of the step's turn.
	Turn int
	// Refs are the step's references, sorted.
	Refs []string
	// FactsDue counts the facts due at the step (a prefix of Plan.Facts).
	FactsDue int
}

// Analyze computes the plan of s.
func Analyze(s *trajectory.Session) *Plan {
	p := &Plan{}
	for _, t := range s.Turns {
		if t.User != "" {
			p.Head = headOf(t.User, HeadBytes)
			break
		}
	}
	seen := map[string]struct{}{}  // tokens of outputs and messages before the block
	facts := map[string]struct{}{} // facts so far
	var prevOutputs []string       // texts the previous step's calls returned
	for ti, t := range s.Turns {
		if said := t.Said(); said != "" {
			Each(said, func(tok string) {
				if _, ok := facts[tok]; !ok {
					facts[tok] = struct{}{}
					p.Facts = append(p.Facts, tok)
				}
			})
		}
		for si, st := range t.Steps {
			block := map[string]struct{}{}
			for _, o := range prevOutputs {
				Each(o, func(tok string) { block[tok] = struct{}{} })
			}
			if si == 0 {
				Each(t.User, func(tok string) { block[tok] = struct{}{} })
			}
			var refs []string
			for _, c := range st.Calls {
				eachArg(c.Args, func(tok string) {
					if _, ok := seen[tok]; !ok {
						return
					}
					if _, ok := block[tok]; ok {
						return
					}
					refs = append(refs, tok)
				})
			}
			sort.Strings(refs)
			refs = slices.Compact(refs)
			p.Steps = append(p.Steps, StepPlan{Turn: ti, Refs: refs, FactsDue: len(p.Facts)})
			for tok := range block {
				seen[tok] = struct{}{}
			}
			prevOutputs = prevOutputs[:0]
			for _, c := range st.Calls {
				prevOutputs = append(prevOutputs, c.Output)
			}
		}
	}
	return p
}

// eachArg calls fn with the tokens of a call's argument values (not their names, which are
// the tool's schema), walked in key order.
func eachArg(v any, fn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			eachArg(x[k], fn)
		}
	case []any:
		for _, e := range x {
			eachArg(e, fn)
		}
	default:
		walk(x, func(s string) { Each(s, fn) })
	}
}

// walk calls fn with every string of a JSON-like value: map keys (sorted) and values, strings,
// and numbers as they are written.
func walk(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case json.Number:
		fn(string(x))
	case float64:
		fn(strconv.FormatFloat(x, 'f', -1, 64))
	case float32:
		fn(strconv.FormatFloat(float64(x), 'f', -1, 32))
	case int:
		fn(strconv.Itoa(x))
	case int64:
		fn(strconv.FormatInt(x, 10))
	case int32:
		fn(strconv.FormatInt(int64(x), 10))
	case bool:
		fn(strconv.FormatBool(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fn(k)
			walk(x[k], fn)
		}
	case []any:
		for _, e := range x {
			walk(e, fn)
		}
	case []string:
		for _, e := range x {
			fn(e)
		}
	case nil:
	default:
		// Typed values (a tool's struct result): their JSON text.
		if b, err := json.Marshal(x); err == nil {
			fn(string(b))
		}
	}
}

// joinLines joins texts with line breaks.
func joinLines(parts []string) string { return strings.Join(parts, "\n") }
