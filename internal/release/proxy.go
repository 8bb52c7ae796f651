package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// Built is one module as released: what the go command downloads of it.
type Built struct {
	Module Module
	// GoMod and GoSum are the module's go.mod and go.sum files as released (GoSum is nil for a
	// module without one).
	GoMod, GoSum []byte
	// Sum and GoModSum are the module's checksums, as go.sum lines carry them ("h1:...").
	Sum, GoModSum string
	// Files is the number of files in the module zip.
	Files int
}

// SumLines are the go.sum lines a module requiring b carries for it.
func (b Built) SumLines(version string) []string {
	return []string{
		fmt.Sprintf("%s %s %s", b.Module.Path, version, b.Sum),
		fmt.Sprintf("%s %s/go.mod %s", b.Module.Path, version, b.GoModSum),
	}
}

// WriteProxy writes every released module at the repository's version into dir, laid out as a
// module proxy (GOPROXY=file://dir, see `go help goproxy`): for each module, @v/list, and the
// version's .info, .mod and .zip. The zips hold the files of the working tree that a commit
// would hold (tracked files and untracked ones git does not ignore), with the released go.mod
// and go.sum, and the root LICENSE in a module that has none, as the Go module mirror adds it.
func (r *Repo) WriteProxy(dir string) ([]Built, error) {
	return r.build(func(b Built, zip []byte, info []byte) error {
		at := filepath.Join(dir, filepath.FromSlash(escapePath(b.Module.Path)), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			return err
		}
		for name, data := range map[string][]byte{
			"list":              []byte(r.Version + "\n"),
			r.Version + ".info": info,
			r.Version + ".mod":  b.GoMod,
			r.Version + ".zip":  zip,
		} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteReleased writes the released go.mod and go.sum of every released module into the
// working tree: the tree of the release commit, the one that is tagged.
func (r *Repo) WriteReleased() ([]Built, error) {
	return r.build(func(b Built, _, _ []byte) error {
		d := filepath.Join(r.Root, filepath.FromSlash(b.Module.Dir))
		if err := os.WriteFile(filepath.Join(d, "go.mod"), b.GoMod, 0o644); err != nil {
			return err
		}
		if b.GoSum == nil {
			return nil
		}
		return os.WriteFile(filepath.Join(d, "go.sum"), b.GoSum, 0o644)
	})
}

// escapePath is a module path as a proxy's URLs and directories spell it.
func escapePath(p string) string {
	e, err := module.EscapePath(p)
	if err != nil {
		panic(err) // the paths are the constants of Modules, all valid
	}
	return e
}

// build builds every released module, in release order, and hands each to emit.
func (r *Repo) build(emit func(b Built, zip, info []byte) error) ([]Built, error) {
	files, err := r.workingFiles()
	if err != nil {
		return nil, err
	}
	when, err := r.headTime()
	if err != nil {
		return nil, err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{r.Version, when})
	if err != nil {
		return nil, err
	}
	built := map[string]Built{}
	var out []Built
	for _, m := range Modules() {
		if !m.Released {
			continue
		}
		b, zip, err := r.buildModule(m, files, built)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Path, err)
		}
		if err := emit(b, zip, info); err != nil {
			return nil, err
		}
		built[m.Path] = b
		out = append(out, b)
	}
	return out, nil
}

// buildModule builds m's released go.mod, go.sum and zip; built holds the siblings built
// before it (a module is released after the siblings it requires).
func (r *Repo) buildModule(m Module, files []string, built map[string]Built) (Built, []byte, error) {
	goMod, f, err := r.releasedGoMod(m)
	if err != nil {
		return Built{}, nil, err
	}
	b := Built{Module: m, GoMod: goMod}
	var sums []string
	siblings := siblingPaths()
	for _, req := range f.Require {
		if !siblings[req.Mod.Path] {
			continue
		}
		s, ok := built[req.Mod.Path]
		if !ok {
			return Built{}, nil, fmt.Errorf("requires %s, which is not released before it", req.Mod.Path)
		}
		sums = append(sums, s.SumLines(r.Version)...)
	}
	// A module that requires nothing but its siblings has a go.sum only once released.
	goSum, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(m.Dir), "go.sum"))
	if err != nil && !os.IsNotExist(err) {
		return Built{}, nil, err
	}
	if goSum != nil || len(sums) > 0 {
		if b.GoSum, err = mergeSums(goSum, sums); err != nil {
			return Built{}, nil, fmt.Errorf("go.sum: %w", err)
		}
	}

	zfiles, err := r.zipFiles(m, files, b, goSum == nil)
	if err != nil {
		return Built{}, nil, err
	}
	checked, err := modzip.CheckFiles(zfiles)
	if err != nil {
		return Built{}, nil, err
	}
	b.Files = len(checked.Valid)
	var zip bytes.Buffer
	if err := modzip.Create(&zip, module.Version{Path: m.Path, Version: r.Version}, zfiles); err != nil {
		return Built{}, nil, err
	}
	if b.Sum, err = hashZip(zip.Bytes()); err != nil {
		return Built{}, nil, err
	}
	if b.GoModSum, err = hashGoMod(b.GoMod); err != nil {
		return Built{}, nil, err
	}
	return b, zip.Bytes(), nil
}

// zipFiles are the files of m's zip: those of files (the working tree's) in its directory, its
// go.mod and go.sum in their released form (b's; addGoSum: the module has no go.sum of its own),
// the root LICENSE when it has none. Files of nested modules are left to modzip to leave out.
func (r *Repo) zipFiles(m Module, files []string, b Built, addGoSum bool) ([]modzip.File, error) {
	var zfiles []modzip.File
	haveLicense := false
	for _, name := range files {
		rel := name
		if m.Dir != "." {
			var ok bool
			if rel, ok = strings.CutPrefix(name, m.Dir+"/"); !ok {
				continue
			}
		}
		switch rel {
		case "go.mod":
			zfiles = append(zfiles, dataFile{rel, b.GoMod})
			continue
		case "go.sum":
			if b.GoSum != nil {
				zfiles = append(zfiles, dataFile{rel, b.GoSum})
			}
			continue
		case "LICENSE":
			haveLicense = true
		}
		zfiles = append(zfiles, diskFile{rel, filepath.Join(r.Root, filepath.FromSlash(name))})
	}
	if b.GoSum != nil && addGoSum {
		zfiles = append(zfiles, dataFile{"go.sum", b.GoSum})
	}
	if !haveLicense && m.Dir != "." {
		license, err := os.ReadFile(filepath.Join(r.Root, "LICENSE"))
		if err != nil {
			return nil, err
		}
		zfiles = append(zfiles, dataFile{"LICENSE", license})
	}
	return zfiles, nil
}

// workingFiles lists the files a commit of the working tree would hold: the tracked files that
// still exist and the untracked files git does not ignore, slash-separated, relative to the root.
func (r *Repo) workingFiles() ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = r.Root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the working tree's files (the release is built from a git clone): %v: %s", err, stderr.Bytes())
	}
	var files []string
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		info, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(name)))
		if err != nil {
			continue // deleted from the working tree: the next commit will not hold it
		}
		if info.Mode().IsRegular() {
			files = append(files, name)
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// headTime is the commit time of HEAD: the time the version's .info reports.
func (r *Repo) headTime() (time.Time, error) {
	cmd := exec.Command("git", "log", "-1", "--format=%cI")
	cmd.Dir = r.Root
	out, err := cmd.Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("git log: %w", err)
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
	return t.UTC(), err
}

// mergeSums adds lines to a go.sum file, keeping the go command's order; a line already there
// is kept, a different checksum for the same module version is an error.
func mergeSums(goSum []byte, lines []string) ([]byte, error) {
	type key struct{ path, version string }
	sums := map[key]string{}
	add := func(l string) error {
		f := strings.Fields(l)
		if len(f) != 3 {
			return fmt.Errorf("malformed line %q", l)
		}
		k := key{f[0], f[1]}
		if have, ok := sums[k]; ok && have != f[2] {
			return fmt.Errorf("%s %s has checksum %s, the working tree builds %s", f[0], f[1], have, f[2])
		}
		sums[k] = f[2]
		return nil
	}
	for _, l := range strings.Split(string(goSum), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if err := add(l); err != nil {
			return nil, err
		}
	}
	for _, l := range lines {
		if err := add(l); err != nil {
			return nil, err
		}
	}
	keys := make([]key, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	// The go command's order (module.Sort): by path, then by version, a version's go.mod line
	// after its zip line.
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		va, _, _ := strings.Cut(a.version, "/")
		vb, _, _ := strings.Cut(b.version, "/")
		if c := semver.Compare(va, vb); c != 0 {
			return c
		}
		return strings.Compare(a.version, b.version)
	})
	var out bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&out, "%s %s %s\n", k.path, k.version, sums[k])
	}
	return out.Bytes(), nil
}

// hashZip is a module zip's checksum, as go.sum holds it.
func hashZip(zip []byte) (string, error) {
	f, err := os.CreateTemp("", "adkctx-release-*.zip")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(zip)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return dirhash.HashZip(f.Name(), dirhash.Hash1)
}

// hashGoMod is a go.mod file's checksum, as go.sum holds it ("path version/go.mod h1:...").
func hashGoMod(goMod []byte) (string, error) {
	return dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(goMod)), nil
	})
}

// diskFile is a file of the working tree, under its path in the module.
type diskFile struct{ rel, name string }

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.name) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.name) }

// dataFile is a file the release writes.
type dataFile struct {
	rel  string
	data []byte
}

func (f dataFile) Path() string                 { return f.rel }
func (f dataFile) Lstat() (fs.FileInfo, error)  { return dataInfo{f}, nil }
func (f dataFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type dataInfo struct{ f dataFile }

func (i dataInfo) Name() string       { return path.Base(i.f.rel) }
func (i dataInfo) Size() int64        { return int64(len(i.f.data)) }
func (i dataInfo) Mode() fs.FileMode  { return 0o644 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }
