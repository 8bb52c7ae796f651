package release

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every kind of exported declaration, one line each, in the form of Go's api/*.txt; nothing
// unexported; parameter names left out at any depth, so that renaming one is no API change.
func TestPackageAPI(t *testing.T) {
	const src = `package p

import (
	"context"
	"iter"
	"time"
)

const Untyped = 8 << 10
const Timeout time.Duration = 10 * time.Second
const Name = "a \"quoted\" name"

type Mode int

const (
	ModeA Mode = iota
	ModeB
	modeC
)

var ErrX error
var hidden int

func New(ctx context.Context, names ...string) (*T, error) { return nil, nil }
func Map[K comparable, V any](m map[K]V, f func(key K, value V) bool) []V { return nil }
func unexported() {}

type T struct {
	Public   int
	private  int
	Callback func(ctx context.Context, n int) error
	Ch       <-chan [4]byte
	Anon     struct{ A, B int }
	inner
	*Mode
}

type inner struct{}

func (inner) Promoted() string { return "" }
func (t *T) Close(context.Context) error { return nil }
func (t T) String() string { return "" }
func (t *T) hidden() {}

type Reader interface {
	Read(p []byte) (n int, err error)
	hidden()
	Stringer
}

type Stringer interface{ String() string }

type Number interface{ ~int | ~float64 }

type List[E any] struct{ Items []E }

func (l *List[E]) All() iter.Seq2[int, E] { return nil }

type Alias = List[string]

type Handler func(context.Context, *T) (bool, error)

type hiddenType struct{}

func (hiddenType) Exported() {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check("example.com/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines, names, _ := packageAPI(pkg, nil)
	want := []string{
		`const Untyped = 8192`,
		`const Timeout time.Duration = 10000000000`,
		`const Name = "a \"quoted\" name"`,
		`type Mode int`,
		`const ModeA Mode = 0`,
		`const ModeB Mode = 1`,
		`var ErrX error`,
		`func New(context.Context, ...string) (*T, error)`,
		`func Map[K comparable, V any](map[K]V, func(K, V) bool) []V`,
		`type T struct`,
		`type T struct, Public int`,
		`type T struct, Callback func(context.Context, int) error`,
		`type T struct, Ch <-chan [4]byte`,
		`type T struct, Anon struct{ A int; B int }`,
		`type T struct, embedded inner`,
		`type T struct, embedded *Mode`,
		`method (T) Promoted() string`,
		`method (*T) Close(context.Context) error`,
		`method (T) String() string`,
		`type Reader interface, Read([]byte) (int, error)`,
		`type Reader interface, embedded Stringer`,
		`type Reader interface { Read }`,
		`type Stringer interface, String() string`,
		`type Stringer interface { String }`,
		`type Number interface, embedded ~int | ~float64`,
		`type Number interface {}`,
		`type List[E any] struct`,
		`type List[E any] struct, Items []E`,
		`method (*List[E]) All() iter.Seq2[int, E]`,
		`type Alias = List[string]`,
		`type Handler func(context.Context, *T) (bool, error)`,
	}
	for i := range want {
		want[i] = "pkg example.com/p, " + want[i]
	}
	if diff := cmp.Diff(sorted(want), sorted(lines)); diff != "" {
		t.Errorf("API lines (-want +got):\n%s", diff)
	}
	// Untyped, Timeout, Name, Mode, ModeA, ModeB, ErrX, New, Map, T, T.Close, T.String,
	// Reader, Stringer, Number, List, List.All, Alias, Handler.
	if names != 19 {
		t.Errorf("exported identifiers: %d, want 19", names)
	}
}

// A declaration that mentions a type users cannot name is reported: in a field, a parameter
// or a result, at any depth, a type argument, through an alias users cannot write either, or
// in what an embedded unexported type promotes (its fields, its methods, an interface's
// methods); an embedded unexported type itself (it only promotes) is not, nor an unexported
// alias of a type users can write.
func TestUnnameableTypes(t *testing.T) {
	const src = `package p

type Ledger struct {
	Records map[string]record
	Count   int
	inner
}

type record struct{ N int }

type inner struct{ Items []record }

func (inner) Reset() {}

func (inner) Last() record { return record{} }

func Open(func(*record)) error { return nil }

func (l *Ledger) Get(string) []record { return nil }

func (l *Ledger) Len() int { return 0 }

type rec = record

type opts = map[string]int

type Set[T comparable] = map[T]struct{}

type List[T any] struct{ Items []T }

func Alias() rec { return rec{} }

func Options() opts { return nil }

func Records() Set[record] { return nil }

func Listed() List[record] { return List[record]{} }

type sealed interface{ isSealed() }

type Sealed interface {
	sealed
	Name() string
}

type visitor interface{ Visit(record) }

type Visitor interface{ visitor }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{}).Check("example.com/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, got := packageAPI(pkg, nil)
	want := []string{
		"pkg example.com/p, func Alias() rec (names rec)",
		"pkg example.com/p, func Listed() List[record] (names record)",
		"pkg example.com/p, func Open(func(*record)) error (names record)",
		"pkg example.com/p, func Records() Set[record] (names record)",
		"pkg example.com/p, method (*Ledger) Get(string) []record (names record)",
		"pkg example.com/p, method (Ledger) Last() record (names record)",
		"pkg example.com/p, type Ledger struct, Records map[string]record (names record)",
		"pkg example.com/p, type Ledger struct, embedded inner (names record)",
		"pkg example.com/p, type Visitor interface, embedded visitor (names record)",
	}
	if diff := cmp.Diff(want, sorted(got)); diff != "" {
		t.Errorf("unnameable (-want +got):\n%s", diff)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// importerFunc imports with a function.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// A public alias of an internal type declares that type for users: its fields and methods are
// listed and counted under the alias, and the type is written by its public name everywhere.
func TestAliasOfInternalType(t *testing.T) {
	check := func(path, src string, imp types.Importer) *types.Package {
		t.Helper()
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := (&types.Config{Importer: imp}).Check(path, fset, []*ast.File{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pkg
	}
	impl := check("example.com/m/internal/impl", `package impl
type Config struct{ Limit int; hidden int }
func (c Config) Validate() error { return nil }
func (c *Config) reset() {}
type Other struct{}
func Use(c *Config) Other { return Other{} }
`, importer.Default())
	pub := check("example.com/m/pub", `package pub
import "example.com/m/internal/impl"
type Config = impl.Config
type Renamed = Config
func Make() *impl.Config { return nil }
func Use(c *Config) impl.Other { return impl.Use(c) }
`, importerFunc(func(path string) (*types.Package, error) {
		if path == impl.Path() {
			return impl, nil
		}
		return importer.Default().Import(path)
	}))
	public := map[*types.TypeName]*types.TypeName{
		impl.Scope().Lookup("Config").(*types.TypeName): pub.Scope().Lookup("Config").(*types.TypeName),
	}
	lines, names, unnameable := packageAPI(pub, public)
	want := []string{
		`type Config struct`,
		`type Config struct, Limit int`,
		`method (Config) Validate() error`,
		`func Make() *Config`,
		`func Use(*Config) impl.Other`,
		`type Renamed struct`,
		`type Renamed struct, Limit int`,
		`method (Renamed) Validate() error`,
	}
	for i := range want {
		want[i] = "pkg example.com/m/pub, " + want[i]
	}
	slices.Sort(lines)
	slices.Sort(want)
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("API (-want +got):\n%s", diff)
	}
	if names != 6 {
		t.Errorf("names = %d, want 6 (Config, Validate, Make, Renamed, Validate, Use)", names)
	}
	// impl.Other has no public alias: users cannot name it.
	if diff := cmp.Diff([]string{"pkg example.com/m/pub, func Use(*Config) impl.Other (names impl.Other)"}, unnameable); diff != "" {
		t.Errorf("unnameable (-want +got):\n%s", diff)
	}
}
