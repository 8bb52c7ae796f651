package steps

import "github.com/adkctx/adkctx/processors/truncate"

// TruncateToolResult bounds a tool result (whatever it holds, see truncate.Value) to cfg, before
// adk-go stores the result in the session. note, when not nil, is called for each cut leaf and its
// result is added to that leaf's marker (for example `full output saved as artifact "x.txt"`,
// after saving truncate.Cut's original under that name).
//
// It returns a new map only when something was cut; otherwise it returns result itself (nil
// stays nil). The input map and everything reachable from it are never modified.
func TruncateToolResult(result map[string]any, cfg truncate.Config, note func(truncate.Cut) string) (map[string]any, truncate.Stats) {
	if result == nil {
		return nil, truncate.Stats{}
	}
	v, st := truncate.Value(result, cfg, note)
	if !st.Truncated {
		return result, st
	}
	m, ok := v.(map[string]any)
	if !ok { // cannot happen: Value keeps the container type
		return result, truncate.Stats{}
	}
	return m, st
}
