package main

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// demoRepo is a small monorepo with nested AGENTS.md files (root, services/, services/billing/).
// Its Go sources carry a "//go:build ignore" line so that this module's `go build ./...` skips
// them; extraction strips that line.
//
//go:embed demorepo
var demoRepo embed.FS

// demoWorkDir is the directory of the demo repository the agent works in.
const demoWorkDir = "services/billing"

const ignoreTag = "//go:build ignore\n\n"

// extractDemoRepo writes the demo repository into a new temporary directory, adds a .git marker
// (so AGENTS.md discovery finds the project root) and generates its bulky files: a CI log,
// vendored sources and golden test files. It returns the temporary directory (remove it when
// done) and the working directory inside it.
func extractDemoRepo() (root, workDir string, err error) {
	root, err = os.MkdirTemp("", "adkctx-demorepo-*")
	if err != nil {
		return "", "", fmt.Errorf("create the demo repository: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(root)
		}
	}()
	err = fs.WalkDir(demoRepo, "demorepo", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "demorepo"), "/")
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := demoRepo.ReadFile(p)
		if err != nil {
			return err
		}
		if path.Ext(p) == ".go" {
			data = []byte(strings.TrimPrefix(string(data), ignoreTag))
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return "", "", fmt.Errorf("extract the demo repository: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		return "", "", err
	}
	workDir = filepath.Join(root, filepath.FromSlash(demoWorkDir))
	for name, gen := range generatedFiles() {
		dst := filepath.Join(workDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(dst, []byte(gen), 0o644); err != nil {
			return "", "", err
		}
	}
	return root, workDir, nil
}

// rng is a tiny deterministic generator so the generated files are identical on every run.
type rng uint64

func (r *rng) next(n int) int {
	*r = *r*6364136223846793005 + 1442695040888963407
	return int(uint64(*r)>>33) % n
}

// generatedFiles returns the demo repository's bulky files, relative to the working directory.
func generatedFiles() map[string]string {
	files := map[string]string{
		"logs/ci-build.log":                    ciLog(),
		"vendor/modules.txt":                   "# acme.example/money v1.4.2\n## explicit; go 1.22\nacme.example/money\n# acme.example/httpx v0.9.0\n## explicit; go 1.22\nacme.example/httpx\n",
		"vendor/acme.example/money/money.go":   vendoredSource("money", "Amount", 34),
		"vendor/acme.example/money/rate.go":    vendoredSource("money", "Rate", 14),
		"vendor/acme.example/money/format.go":  vendoredSource("money", "Format", 12),
		"vendor/acme.example/httpx/client.go":  vendoredSource("httpx", "Client", 16),
		"vendor/acme.example/httpx/retry.go":   vendoredSource("httpx", "Retry", 10),
		"vendor/acme.example/httpx/headers.go": vendoredSource("httpx", "Header", 8),
	}
	regions := []string{"eu-west", "us-east", "uk"}
	r := rng(7)
	for i := 1; i <= 300; i++ {
		region := regions[r.next(len(regions))]
		lines := 1 + r.next(4)
		var b strings.Builder
		fmt.Fprintf(&b, "{\n  \"invoice_id\": \"INV-%05d\",\n  \"customer_id\": \"C-%04d\",\n  \"region\": %q,\n  \"lines\": [\n", i, r.next(9000)+1000, region)
		total := 0
		for l := 0; l < lines; l++ {
			q, u := 1+r.next(5), 50+r.next(5000)
			total += q * u
			sep := ","
			if l == lines-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "    {\"sku\": \"SKU-%03d\", \"quantity\": %d, \"unit_minor\": %d}%s\n", r.next(999), q, u, sep)
		}
		fmt.Fprintf(&b, "  ],\n  \"subtotal_minor\": %d\n}\n", total)
		files[fmt.Sprintf("testdata/golden/invoice_%03d.json", i)] = b.String()
	}
	return files
}

// ciLog is the nightly build's log: module downloads with a flaky mirror, hundreds of passing
// tests, deprecation warnings, and one failing test at the very end.
func ciLog() string {
	var b strings.Builder
	r := rng(42)
	sec := 0
	stamp := func() string {
		sec += r.next(3)
		return fmt.Sprintf("2026-11-21T02:%02d:%02d.%03dZ", sec/60%60, sec%60, r.next(1000))
	}
	fmt.Fprintf(&b, "%s [setup] runner ci-7 starting job nightly-billing #1184\n", stamp())
	for i := 0; i < 40; i++ {
		mod := []string{"acme.example/money", "acme.example/httpx", "golang.org/x/text", "github.com/google/uuid"}[i%4]
		if i%9 == 4 {
			fmt.Fprintf(&b, "%s [deps] error: fetching %s: read tcp 10.0.3.7:51544->10.0.0.2:443: connection reset by peer; retrying (attempt %d)\n", stamp(), mod, i%3+1)
			continue
		}
		fmt.Fprintf(&b, "%s [deps] go: downloading %s v1.%d.%d\n", stamp(), mod, r.next(9), r.next(20))
	}
	pkgs := []string{"billing", "billing/internal/ledger", "billing/internal/store", "billing/internal/webhook", "billing/cmd/billingd"}
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&b, "%s [build] compile acme.example/services/%s (%d files, %dms)\n", stamp(), pkgs[i%len(pkgs)], 2+r.next(14), 40+r.next(900))
		if i%17 == 5 {
			fmt.Fprintf(&b, "%s [build] warning: acme.example/money.Amount.Float is deprecated: use MinorUnits\n", stamp())
		}
	}
	names := []string{"Subtotal", "Total", "TaxRate", "LedgerAppend", "LedgerBalance", "Webhook", "Store", "Handler", "Config", "Retry"}
	for i := 0; i < 420; i++ {
		name := fmt.Sprintf("Test%s_%03d", names[i%len(names)], i)
		fmt.Fprintf(&b, "%s [test] === RUN   %s\n", stamp(), name)
		fmt.Fprintf(&b, "%s [test] --- PASS: %s (0.%02ds)\n", stamp(), name, r.next(60))
		if i%53 == 11 {
			fmt.Fprintf(&b, "%s [test] warning: %s took longer than the 50ms budget\n", stamp(), name)
		}
	}
	fmt.Fprintf(&b, "%s [test] === RUN   TestTotalRoundsHalfEvenOnce\n", stamp())
	fmt.Fprintf(&b, "%s [test]     invoice_test.go:17: total = 683, want 684\n", stamp())
	fmt.Fprintf(&b, "%s [test] --- FAIL: TestTotalRoundsHalfEvenOnce (0.00s)\n", stamp())
	fmt.Fprintf(&b, "%s [test] === RUN   TestTotalUnknownRegion\n", stamp())
	fmt.Fprintf(&b, "%s [test] --- PASS: TestTotalUnknownRegion (0.00s)\n", stamp())
	fmt.Fprintf(&b, "%s [test] FAIL\n", stamp())
	fmt.Fprintf(&b, "%s [test] FAIL\tacme.example/services/billing\t0.412s\n", stamp())
	fmt.Fprintf(&b, "%s [make] make: *** [Makefile:6: test] Error 1\n", stamp())
	fmt.Fprintf(&b, "%s [setup] job nightly-billing #1184 failed after %ds\n", stamp(), sec)
	return b.String()
}

// vendoredSource generates a plausible vendored Go file with n functions around one type.
func vendoredSource(pkg, typ string, n int) string {
	var b strings.Builder
	r := rng(len(typ)*31 + n)
	fmt.Fprintf(&b, "// Code vendored from acme.example/%s. DO NOT EDIT.\n\n// Package %s is Acme's %s library.\npackage %s\n\n", pkg, pkg, pkg, pkg)
	fmt.Fprintf(&b, "import (\n\t\"errors\"\n\t\"fmt\"\n\t\"strconv\"\n)\n\n")
	fmt.Fprintf(&b, "// %s is the package's central value type.\ntype %s struct {\n\tminor int64\n\tscale int32\n\tcode  string\n}\n\n", typ, typ)
	fmt.Fprintf(&b, "// Err%sOverflow reports an arithmetic overflow.\nvar Err%sOverflow = errors.New(%q)\n\n", typ, typ, pkg+": overflow")
	verbs := []string{"Add", "Sub", "Mul", "MulRate", "Div", "RoundHalfEven", "RoundHalfUp", "Neg", "Abs", "Cmp", "Split", "Allocate", "Parse", "String", "MinorUnits", "Float", "WithScale", "Clamp"}
	for i := 0; i < n; i++ {
		verb := verbs[i%len(verbs)]
		if i >= len(verbs) {
			verb += fmt.Sprint(i / len(verbs))
		}
		fmt.Fprintf(&b, "// %s implements %s.%s. It returns an error wrapping Err%sOverflow when the result does\n// not fit in 63 bits.\n", verb, typ, verb, typ)
		if verb == "Float" {
			fmt.Fprintf(&b, "//\n// Deprecated: use MinorUnits; floats lose cents.\n")
		}
		fmt.Fprintf(&b, "func (a %s) %s(b %s) (%s, error) {\n", typ, verb, typ, typ)
		fmt.Fprintf(&b, "\tif a.code != b.code && b.code != \"\" {\n\t\treturn %s{}, fmt.Errorf(\"%s.%s: mixed codes %%q and %%q\", a.code, b.code)\n\t}\n", typ, pkg, verb)
		for k := 0; k < 6+r.next(10); k++ {
			switch r.next(5) {
			case 0:
				fmt.Fprintf(&b, "\tif a.minor > %d {\n\t\treturn %s{}, fmt.Errorf(\"%s.%s: %%w\", Err%sOverflow)\n\t}\n", 1<<(40+r.next(20)), typ, pkg, verb, typ)
			case 1:
				fmt.Fprintf(&b, "\ta.minor = a.minor*%d/%d + b.minor\n", 1+r.next(100), 1+r.next(9))
			case 2:
				fmt.Fprintf(&b, "\ta.scale = int32(strconv.IntSize) - %d\n", r.next(32))
			case 3:
				fmt.Fprintf(&b, "\t// TODO(acme): %s should not allocate on this path (ticket MON-%d).\n", verb, 100+r.next(900))
			default:
				fmt.Fprintf(&b, "\tif b.scale != a.scale {\n\t\tb.minor = rescale(b.minor, b.scale, a.scale)\n\t}\n")
			}
		}
		fmt.Fprintf(&b, "\treturn a, nil\n}\n\n")
	}
	fmt.Fprintf(&b, "func rescale(v int64, from, to int32) int64 {\n\tfor ; from < to; from++ {\n\t\tv *= 10\n\t}\n\tfor ; from > to; from-- {\n\t\tv /= 10\n\t}\n\treturn v\n}\n\nvar _ = strconv.Itoa\n")
	return b.String()
}
