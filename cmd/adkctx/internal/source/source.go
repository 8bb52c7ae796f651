// Package source lists where recorded sessions come from — trajectory files and directories,
// adk-go database-service sessions on SQLite or PostgreSQL — and reads them one session at a
// time, never writing to any of them.
package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
)

// Item is one session read, or the error that ended a source.
type Item struct {
	Session *trajectory.Session
	// Source names where an error happened (a file, a database session).
	Source string
	Err    error
}

// Files lists the trajectory files of paths: a file is read whatever its name (its format is
// recognized by its content); a directory is walked for files named *.json or *.traj, in
// lexical order, skipping names starting with a dot.
func Files(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if path != p && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".traj")) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}

// ReadFiles reads the sessions of files in order, one at a time. A file that fails ends with an
// Item holding its error; the next file is read after it.
func ReadFiles(ctx context.Context, files []string) iter.Seq[Item] {
	return func(yield func(Item) bool) {
		for _, f := range files {
			for s, err := range trajectory.ReadFile(f) {
				if ctx.Err() != nil {
					yield(Item{Source: f, Err: ctx.Err()})
					return
				}
				it := Item{Session: s, Source: f, Err: err}
				if s != nil {
					it.Source = s.ID
				}
				if err != nil {
					var fe *trajectory.FormatError
					if errors.As(err, &fe) && fe.Record != "" {
						it.Source = fmt.Sprintf("%s (%s on)", f, fe.Record)
					}
				}
				if !yield(it) {
					return
				}
				if err != nil {
					break
				}
			}
		}
	}
}
