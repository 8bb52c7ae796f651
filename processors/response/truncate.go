package response

import "github.com/adkctx/adkctx/processors/truncate"

// TruncateToolResult cuts the strings of a tool result (nested anywhere in the map) to cfg with
// truncate.Value, before adk-go stores the result in the session. note, when not empty, is added
// to every marker (for example `full output saved as artifact "tool-output-xyz.txt"`).
//
// It returns a new map only when something was cut; otherwise it returns result itself (nil
// stays nil). The input map and everything reachable from it are never modified.
func TruncateToolResult(result map[string]any, cfg truncate.Config, note string) (map[string]any, truncate.Stats) {
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
