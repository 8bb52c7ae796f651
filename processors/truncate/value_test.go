package truncate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValue(t *testing.T) {
	big := numberedLines(2000) // 18000 bytes, 2000 lines
	cfg := Config{MaxBytes: 4096, MaxLines: 100}
	for _, tc := range []struct {
		name        string
		in          any
		wantCut     int
		wantSame    bool // the very same value is returned
		keepStrings []string
	}{
		{name: "nil", in: nil, wantSame: true},
		{name: "number", in: 42.0, wantSame: true},
		{name: "small map", in: map[string]any{"output": "ok", "code": 0.0}, wantSame: true},
		{name: "one big string", in: map[string]any{"stdout": big, "exit_code": 2.0}, wantCut: 1},
		{name: "bare string", in: big, wantCut: 1},
		{
			name:        "big string cut, small strings survive",
			in:          map[string]any{"stdout": big, "stderr": "warning: x\n", "cmd": "go build ./..."},
			wantCut:     1,
			keepStrings: []string{"warning: x\n", "go build ./..."},
		},
		{
			name:    "nested lists and maps share one budget",
			in:      map[string]any{"runs": []any{map[string]any{"log": big}, map[string]any{"log": big}}, "names": []string{big, "short"}},
			wantCut: 3,
		},
		{
			name:    "the same big (>= 64 KiB) string under two keys",
			in:      map[string]any{"a": numberedLines(20000), "b": []any{numberedLines(20000)}, "c": "small"},
			wantCut: 2,
		},
		{
			name:    "map[string]string",
			in:      map[string]any{"env": map[string]string{"A": big}},
			wantCut: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopy(tc.in)
			out, st := Value(tc.in, cfg, "note")
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Fatalf("Value mutated its input (-before +after):\n%s", diff)
			}
			if st.StringsCut != tc.wantCut {
				t.Errorf("StringsCut = %d, want %d", st.StringsCut, tc.wantCut)
			}
			if st.Truncated != (tc.wantCut > 0) {
				t.Errorf("Truncated = %v", st.Truncated)
			}
			if tc.wantSame {
				if diff := cmp.Diff(tc.in, out); diff != "" {
					t.Errorf("value changed (-in +out):\n%s", diff)
				}
				return
			}
			var ms measure
			ms.walk(out, 0)
			if ms.bytes > cfg.MaxBytes || ms.lines > cfg.MaxLines {
				t.Errorf("output strings total %d bytes / %d lines, over %+v", ms.bytes, ms.lines, cfg)
			}
			if st.KeptBytes+st.OmittedBytes != st.OriginalBytes {
				t.Errorf("stats do not add up: %+v", st)
			}
			all := strings.Join(collect(out), "\x00")
			for _, k := range tc.keepStrings {
				if !strings.Contains(all, k) {
					t.Errorf("small string %q was not kept", k)
				}
			}
			if strings.Count(all, MarkerPrefix) != tc.wantCut || !strings.Contains(all, "; note ...]") {
				t.Errorf("want %d markers with the note in:\n%s", tc.wantCut, all)
			}
			// Idempotent: the result is within the budget and is not cut again.
			again, st2 := Value(out, cfg, "note")
			if st2.Truncated {
				t.Errorf("second Value cut again: %+v", st2)
			}
			if diff := cmp.Diff(out, again); diff != "" {
				t.Errorf("Value not idempotent:\n%s", diff)
			}
		})
	}
}

func TestValueFairShare(t *testing.T) {
	// 1 KiB budget floor: a 3000-byte and a 600-byte string under a 3000-byte budget. The small
	// one keeps everything, the big one gets the remaining 2400.
	in := map[string]any{"a": strings.Repeat("a", 3000), "b": strings.Repeat("b", 600)}
	out, st := Value(in, Config{MaxBytes: 3000}, "")
	m := out.(map[string]any)
	if m["b"] != in["b"] {
		t.Errorf("small string was cut")
	}
	if got := len(m["a"].(string)); got > 2400 || got < 2000 {
		t.Errorf("big string cut to %d bytes, want about 2400", got)
	}
	if st.StringsCut != 1 {
		t.Errorf("StringsCut = %d", st.StringsCut)
	}
}

func TestFairCap(t *testing.T) {
	for _, tc := range []struct {
		sizes         []int
		budget, floor int
		want          int
	}{
		{[]int{10, 20, 30}, 100, 1, 30},
		{[]int{10, 20, 300}, 100, 1, 70},
		{[]int{100, 100, 100}, 90, 1, 30},
		{[]int{100, 100, 100}, 90, 50, 50},
		{nil, 90, 5, 90},
	} {
		if got := fairCap(tc.sizes, tc.budget, tc.floor); got != tc.want {
			t.Errorf("fairCap(%v, %d, %d) = %d, want %d", tc.sizes, tc.budget, tc.floor, got, tc.want)
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		if x == nil {
			return x
		}
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	case []string:
		if x == nil {
			return x
		}
		return append([]string{}, x...)
	case map[string]string:
		if x == nil {
			return x
		}
		m := make(map[string]string, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m
	}
	return v
}

func collect(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case map[string]any:
		for _, e := range x {
			out = append(out, collect(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, collect(e)...)
		}
	case []string:
		out = append(out, x...)
	case map[string]string:
		for _, e := range x {
			out = append(out, e)
		}
	}
	return out
}

// valueFromBytes builds a nested value (maps, lists, strings of various sizes) from fuzz bytes.
func valueFromBytes(data []byte, depth int) any {
	if len(data) == 0 {
		return ""
	}
	op, rest := data[0], data[1:]
	switch {
	case depth > 4 || op%4 == 0:
		return strings.Repeat(string(rest[:min(len(rest), 8)])+"\n", int(op)*20)
	case op%4 == 1:
		m := map[string]any{}
		for i := 0; i < int(op>>5)+1 && len(rest) > 0; i++ {
			n := min(len(rest), int(rest[0])%16+1)
			m[string(rune('a'+i))] = valueFromBytes(rest[:n], depth+1)
			rest = rest[n:]
		}
		return m
	case op%4 == 2:
		var l []any
		for i := 0; i < int(op>>5)+1 && len(rest) > 0; i++ {
			n := min(len(rest), int(rest[0])%16+1)
			l = append(l, valueFromBytes(rest[:n], depth+1))
			rest = rest[n:]
		}
		return l
	default:
		return []string{string(rest), strings.Repeat("y", int(op)*30)}
	}
}

func FuzzValue(f *testing.F) {
	f.Add([]byte{1, 4, 200, 'a', 'b', 2, 250, 'c'}, uint16(1024), uint8(20))
	f.Add([]byte{0x61, 3, 255, 1, 2, 3, 7, 9}, uint16(4096), uint8(100))
	f.Add([]byte{3, 'z'}, uint16(0), uint8(0))
	f.Add([]byte("10\xff000"), uint16(4096), uint8(23)) // a cut single line gains 2 lines
	f.Add([]byte("1\x107"), uint16(1366), uint8(241))   // a line cut of empty lines gains bytes
	f.Fuzz(func(t *testing.T, data []byte, maxBytes uint16, maxLines uint8) {
		cfg := Config{MaxBytes: max(int(maxBytes), MinMaxBytes), MaxLines: max(int(maxLines), MinMaxLines)}
		in := valueFromBytes(data, 0)
		before := deepCopy(in)
		out, st := Value(in, cfg, "n")
		if !cmp.Equal(before, in) {
			t.Fatalf("input mutated")
		}
		var m measure
		m.walk(out, 0)
		eff := cfg.withDefaults()
		capB := min(MinShareBytes, eff.MaxBytes)
		if m.bytes > eff.MaxBytes && st.StringsCut > 0 && m.bytes > st.StringsCut*(capB+len(Marker(1<<30, 1<<40, 1<<30, 1<<40, "n"))+2)+st.KeptBytes {
			t.Fatalf("output %d bytes, budget %d, %d strings cut", m.bytes, eff.MaxBytes, st.StringsCut)
		}
		if st.KeptBytes+st.OmittedBytes != st.OriginalBytes {
			t.Fatalf("stats do not add up: %+v", st)
		}
		if !st.Truncated && !cmp.Equal(in, out) {
			t.Fatalf("value changed without a cut")
		}
		if eff.MaxBytes >= 512 {
			again, st2 := Value(out, cfg, "n")
			if st2.Truncated || !cmp.Equal(out, again) {
				t.Fatalf("not idempotent: %+v", st2)
			}
		}
	})
}
