package trajectory

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead: any bytes give sessions or a *FormatError, never a panic, and every session read
// holds what the replay relies on: unique call ids, a response for every call, a reply in
// every turn.
func FuzzRead(f *testing.F) {
	for _, dir := range []string{"testdata", "testdata/bad"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		lines, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, p := range append(files, lines...) {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for s, err := range Read("fuzz.json", bytes.NewReader(data)) {
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v (%T) is not a *FormatError", err, err)
				}
				return
			}
			ids := map[string]bool{}
			for _, turn := range s.Turns {
				if len(turn.Steps) == 0 {
					t.Fatalf("a turn without a reply: %+v", turn)
				}
				for _, st := range turn.Steps {
					for _, c := range st.Calls {
						if c.ID == "" || ids[c.ID] {
							t.Fatalf("call id %q empty or repeated", c.ID)
						}
						ids[c.ID] = true
						if c.Response == nil || c.Args == nil {
							t.Fatalf("call %q without response or args", c.ID)
						}
					}
				}
			}
		}
	})
}
