package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
)

// Limits of the tools themselves (adkctx truncates what they return; these only keep a tool from
// reading something absurd into memory).
const (
	maxReadBytes   = 16 << 20 // read_file refuses larger files
	maxSearchBytes = 4 << 20  // search_text skips larger files
	maxMatchChars  = 300      // one matching line is cut to this many bytes
	binarySniff    = 8000     // bytes checked for NUL to call a file binary
)

// errOutside is returned (as a tool error the model sees) for a path that leaves the working
// directory.
var errOutside = errors.New("path is outside the working directory")

// workspace confines the tools to one directory tree.
type workspace struct {
	root string // absolute, symlinks resolved
}

func newWorkspace(dir string) (*workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return &workspace{root: real}, nil
}

// resolve maps a path given by the model (relative to the root, or absolute inside it) to an
// absolute path inside the root, following symlinks; anything that leaves the root is refused.
func (w *workspace) resolve(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		p = "."
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(w.root, filepath.FromSlash(p))
	}
	if !w.inside(abs) {
		return "", fmt.Errorf("%w: %q", errOutside, p)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no such file or directory: %q", p)
		}
		return "", fmt.Errorf("cannot resolve %q: %w", p, err)
	}
	if !w.inside(real) {
		return "", fmt.Errorf("%w: %q (symbolic link)", errOutside, p)
	}
	return real, nil
}

func (w *workspace) inside(abs string) bool {
	rel, err := filepath.Rel(w.root, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (w *workspace) rel(abs string) string {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}

// ListArgs are list_files' arguments.
type ListArgs struct {
	Path string `json:"path,omitempty" jsonschema:"directory to list, relative to the working directory (default: the working directory itself)"`
}

// ListResult is list_files' result.
type ListResult struct {
	Path       string `json:"path"`
	Entries    int    `json:"entries"`
	TotalBytes int64  `json:"total_bytes"`
	Listing    string `json:"listing"`
}

// ReadArgs are read_file's arguments.
type ReadArgs struct {
	Path string `json:"path" jsonschema:"file to read, relative to the working directory"`
}

// ReadResult is read_file's result.
type ReadResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Lines   int    `json:"lines"`
	Content string `json:"content"`
}

// SearchArgs are search_text's arguments.
type SearchArgs struct {
	Pattern string `json:"pattern" jsonschema:"regular expression (RE2 syntax) to look for, line by line"`
	Path    string `json:"path,omitempty" jsonschema:"file or directory to search, relative to the working directory (default: everything)"`
}

// SearchResult is search_text's result.
type SearchResult struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Matches int    `json:"matches"`
	Files   int    `json:"files"`
	Results string `json:"results"`
}

// listFiles lists every regular file under the path, recursively, with its size.
func (w *workspace) listFiles(args ListArgs) (ListResult, error) {
	start, err := w.resolve(args.Path)
	if err != nil {
		return ListResult{}, err
	}
	res := ListResult{Path: w.rel(start)}
	var b strings.Builder
	err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are left out, like ls -R
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		res.Entries++
		res.TotalBytes += info.Size()
		fmt.Fprintf(&b, "%9d  %s\n", info.Size(), w.rel(p))
		return nil
	})
	if err != nil {
		return ListResult{}, err
	}
	res.Listing = b.String()
	return res, nil
}

// readFile returns a whole text file.
func (w *workspace) readFile(args ReadArgs) (ReadResult, error) {
	p, err := w.resolve(args.Path)
	if err != nil {
		return ReadResult{}, err
	}
	info, err := os.Stat(p)
	if err != nil {
		return ReadResult{}, err
	}
	if info.IsDir() {
		return ReadResult{}, fmt.Errorf("%q is a directory: use list_files", args.Path)
	}
	if !info.Mode().IsRegular() {
		return ReadResult{}, fmt.Errorf("%q is not a regular file", args.Path)
	}
	if info.Size() > maxReadBytes {
		return ReadResult{}, fmt.Errorf("%q is %d bytes, over the %d-byte read limit: search it instead", args.Path, info.Size(), maxReadBytes)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return ReadResult{}, err
	}
	if isBinary(data) {
		return ReadResult{}, fmt.Errorf("%q is a binary file", args.Path)
	}
	return ReadResult{Path: w.rel(p), Bytes: len(data), Lines: countLines(data), Content: string(data)}, nil
}

// searchText reports every line matching the pattern, grep -rn style.
func (w *workspace) searchText(args SearchArgs) (SearchResult, error) {
	if args.Pattern == "" {
		return SearchResult{}, errors.New("pattern is empty")
	}
	re, err := regexp.Compile(args.Pattern)
	if err != nil {
		return SearchResult{}, fmt.Errorf("bad pattern: %w", err)
	}
	start, err := w.resolve(args.Path)
	if err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Pattern: args.Pattern, Path: w.rel(start)}
	var b strings.Builder
	search := func(p string) {
		data, err := os.ReadFile(p)
		if err != nil || isBinary(data) {
			return
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
		n, hit := 0, false
		for sc.Scan() {
			n++
			line := sc.Bytes()
			if !re.Match(line) {
				continue
			}
			hit = true
			res.Matches++
			if len(line) > maxMatchChars {
				line = append(line[:maxMatchChars:maxMatchChars], "…"...)
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", w.rel(p), n, line)
		}
		if hit {
			res.Files++
		}
	}
	err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > maxSearchBytes {
			return nil
		}
		search(p)
		return nil
	})
	if err != nil {
		return SearchResult{}, err
	}
	res.Results = b.String()
	return res, nil
}

func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0
}

func countLines(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	n := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// Tool names, as the model calls them.
const (
	toolList   = "list_files"
	toolRead   = "read_file"
	toolSearch = "search_text"
)

// newTools returns the three tools, confined to dir.
func newTools(dir string) ([]tool.Tool, error) {
	w, err := newWorkspace(dir)
	if err != nil {
		return nil, err
	}
	list, err := functiontool.New(functiontool.Config{
		Name:        toolList,
		Description: "Lists every file under a directory of the working directory, recursively, one per line with its size in bytes.",
	}, func(_ agent.ToolContext, a ListArgs) (ListResult, error) { return w.listFiles(a) })
	if err != nil {
		return nil, err
	}
	read, err := functiontool.New(functiontool.Config{
		Name:        toolRead,
		Description: "Returns the whole content of a text file of the working directory, with its size and line count.",
	}, func(_ agent.ToolContext, a ReadArgs) (ReadResult, error) { return w.readFile(a) })
	if err != nil {
		return nil, err
	}
	search, err := functiontool.New(functiontool.Config{
		Name:        toolSearch,
		Description: "Searches text files of the working directory for a regular expression and returns every matching line as path:line: text.",
	}, func(_ agent.ToolContext, a SearchArgs) (SearchResult, error) { return w.searchText(a) })
	if err != nil {
		return nil, err
	}
	return []tool.Tool{list, read, search}, nil
}
