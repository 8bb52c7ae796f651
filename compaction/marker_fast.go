package compaction

import (
	"math"
	"unicode/utf8"

	"google.golang.org/genai"
)

// fastWire decodes the common shape of a stored record (what NewMarkerEvent
// writes, after any JSON round-trip) without going through encoding/json.
// It gives up (ok=false) on anything unusual — unknown or differently-cased
// keys, nulls, non-float64 numbers, fractional or huge integers, invalid
// UTF-8, non-text parts — and the caller then takes the encoding/json path,
// which defines the semantics; FuzzReadMarker checks both agree.
func fastWire(v map[string]any) (w wireMarker, ok bool) {
	for k, val := range v {
		if val == nil {
			return w, false
		}
		switch k {
		case "version":
			n, ok := fastInt(val)
			if !ok {
				return w, false
			}
			w.Version = &n
		case "startTimestamp", "endTimestamp":
			f, ok := val.(float64)
			if !ok {
				return w, false
			}
			if k == "startTimestamp" {
				w.StartTimestamp = &f
			} else {
				w.EndTimestamp = &f
			}
		case "compressionRatio":
			f, ok := val.(float64)
			if !ok {
				return w, false
			}
			w.CompressionRatio = f
		case "eventCount":
			n, ok := fastInt(val)
			if !ok {
				return w, false
			}
			w.EventCount = &n
		case "originalTokens", "compactedTokens":
			n, ok := fastInt(val)
			if !ok {
				return w, false
			}
			if k == "originalTokens" {
				w.OriginalTokens = n
			} else {
				w.CompactedTokens = n
			}
		case "firstEventId", "lastEventId", "firstInvocationId", "lastInvocationId", "trigger", "summarizer":
			str, ok := fastString(val)
			if !ok {
				return w, false
			}
			switch k {
			case "firstEventId":
				w.FirstEventID = str
			case "lastEventId":
				w.LastEventID = str
			case "firstInvocationId":
				w.FirstInvocationID = str
			case "lastInvocationId":
				w.LastInvocationID = str
			case "trigger":
				w.Trigger = str
			default:
				w.Summarizer = str
			}
		case "edgeEventIds", "excludedEventIds":
			ids, ok := fastStrings(val)
			if !ok {
				return w, false
			}
			if k == "edgeEventIds" {
				w.EdgeEventIDs = ids
			} else {
				w.ExcludedEventIDs = ids
			}
		case "compactedContent":
			c, ok := fastContent(val)
			if !ok {
				return w, false
			}
			w.CompactedContent = c
		default:
			return w, false
		}
	}
	return w, true
}

// fastInt accepts a float64 holding an integer well inside the int range.
func fastInt(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f > 1<<53 || f < -(1<<53) || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

func fastString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok && utf8.ValidString(s)
}

func fastStrings(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := fastString(item)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func fastContent(v any) (*genai.Content, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	c := &genai.Content{}
	for k, val := range m {
		switch k {
		case "role":
			s, ok := fastString(val)
			if !ok {
				return nil, false
			}
			c.Role = s
		case "parts":
			list, ok := val.([]any)
			if !ok {
				return nil, false
			}
			c.Parts = make([]*genai.Part, 0, len(list))
			for _, item := range list {
				pm, ok := item.(map[string]any)
				if !ok {
					return nil, false
				}
				p := &genai.Part{}
				for pk, pv := range pm {
					switch pk {
					case "text":
						s, ok := fastString(pv)
						if !ok {
							return nil, false
						}
						p.Text = s
					case "thought":
						b, ok := pv.(bool)
						if !ok {
							return nil, false
						}
						p.Thought = b
					default:
						return nil, false
					}
				}
				c.Parts = append(c.Parts, p)
			}
		default:
			return nil, false
		}
	}
	return c, true
}
