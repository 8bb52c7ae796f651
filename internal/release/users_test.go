package release

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What users are shown: an identifier counts when a file holding an Example function uses it
// (a type by its name, a field, a method, a constant or a variable of it; the helpers beside the
// Example too), or when the README names it; a test file without an Example shows nothing.
func TestUses(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.25\n",
		"p/p.go": `package p

type Kind string

const (
	KindA Kind = "a"
	KindB Kind = "b"
)

type Store struct{ Size int }

func (s *Store) Save() error { return nil }

func (s *Store) Load() error { return nil }

func (s *Store) Drop() error { return nil }

type Report struct{}

func Open() *Report { return nil }

type Unused struct{}

func Helper() {}

func OnlyInTests() {}
`,
		"p/example_test.go": `package p_test

import (
	"fmt"

	"example.com/m/p"
)

type wrapper struct{ s *p.Store }

func (w wrapper) save() error { return w.s.Save() }

func Example() {
	r := p.Open()
	fmt.Println(r != nil, p.KindA)
	var s p.Store
	fmt.Println(s.Size)
}
`,
		"p/p_test.go": `package p_test

import (
	"testing"

	"example.com/m/p"
)

func TestP(t *testing.T) { p.OnlyInTests() }
`,
	}
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	used := map[string]bool{}
	if err := usesIn(dir, used); err != nil {
		t.Fatal(err)
	}
	var got []string
	for id, ok := range used {
		if ok && len(id) > len("example.com/m/p.") && id[:len("example.com/m/p.")] == "example.com/m/p." {
			got = append(got, id[len("example.com/m/p."):])
		}
	}
	slices.Sort(got)
	// Open (called), KindA and so Kind (a constant of it), Report (r holds one), Store (declared,
	// a field read, and the helper type's field and method call in the example's file).
	want := []string{"Kind", "KindA", "Open", "Report", "Store", "Store.Save"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("used (-want +got):\n%s", diff)
	}

	readme := "Call `p.Helper()` first; then `s.Load()`.\n"
	named := namedIn(readme, []string{"example.com/m/p.Helper", "example.com/m/p.Store.Load", "example.com/m/p.Store.Drop", "example.com/m/p.Unused", "example.com/m/q.Thing.Load"})
	wantNamed := map[string]bool{
		"example.com/m/p.Helper": true, "example.com/m/p.Store.Load": true,
		"example.com/m/p.Store.Drop": false, "example.com/m/p.Unused": false,
		"example.com/m/q.Thing.Load": false, // a method of a package the README does not name
	}
	if diff := cmp.Diff(wantNamed, named); diff != "" {
		t.Errorf("named in the README (-want +got):\n%s", diff)
	}
}
