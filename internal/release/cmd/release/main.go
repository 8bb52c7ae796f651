// Command release builds adkctx's modules as they are released (docs/RELEASING.md). Run it from
// anywhere in the repository:
//
//	go -C internal/release run ./cmd/release check              # go.mod files agree with VERSION
//	go -C internal/release run ./cmd/release proxy -o DIR       # a module proxy of the candidate
//	go -C internal/release run ./cmd/release prepare            # the release commit's go.mod/go.sum
//	go -C internal/release run ./cmd/release tags               # the tags to push, in order
//	go -C internal/release run ./cmd/release set-version v0.2.0 # the next release's version
//
// The version is the repository's VERSION file.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/adkctx/adkctx/internal/release"
)

const usage = `usage: release check | proxy -o DIR | prepare | tags | set-version VERSION

check        verify that every go.mod requires its siblings at the VERSION file's version
proxy -o DIR write the released modules at that version into DIR, a module proxy
             (GOPROXY=file://DIR); DIR must not exist or be empty
prepare      write the released go.mod and go.sum files into the working tree (the release
             commit: the siblings' replace directives dropped, their checksums added)
tags         print the git tags of the release, in the order they are pushed
set-version  write VERSION and every requirement of a sibling
`

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "release:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return flag.ErrHelp
	}
	repo, err := release.Open(".")
	if err != nil {
		return err
	}
	switch cmd, args := args[0], args[1:]; cmd {
	case "check":
		if err := repo.Check(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "every go.mod requires its siblings at %s\n", repo.Version)
		return nil
	case "proxy":
		flags := flag.NewFlagSet("proxy", flag.ContinueOnError)
		out := flags.String("o", "", "the directory to write the module proxy into")
		if err := flags.Parse(args); err != nil {
			return err
		}
		if *out == "" {
			return errors.New("proxy: -o DIR is required")
		}
		if entries, err := os.ReadDir(*out); err == nil && len(entries) > 0 {
			return fmt.Errorf("proxy: %s is not empty", *out)
		}
		built, err := repo.WriteProxy(*out)
		if err != nil {
			return err
		}
		abs, err := filepath.Abs(*out)
		if err != nil {
			return err
		}
		for _, b := range built {
			fmt.Fprintf(stdout, "%s %s %s (%d files)\n", b.Module.Path, repo.Version, b.Sum, b.Files)
		}
		fmt.Fprintf(stdout, "GOPROXY=file://%s,%s\n", filepath.ToSlash(abs), "$(go env GOPROXY)")
		return nil
	case "prepare":
		built, err := repo.WriteReleased()
		if err != nil {
			return err
		}
		for _, b := range built {
			fmt.Fprintf(stdout, "%s/go.mod: released form for %s\n", b.Module.Dir, repo.Version)
		}
		return nil
	case "tags":
		for _, m := range release.Modules() {
			if m.Released {
				fmt.Fprintln(stdout, m.Tag(repo.Version))
			}
		}
		return nil
	case "set-version":
		if len(args) != 1 {
			return errors.New("set-version: give one version, like v0.2.0")
		}
		return repo.SetVersion(args[0])
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}
