// Package release builds adkctx's Go modules the way the go command downloads them, so that a
// candidate version can be installed and tested before anything is tagged.
//
// The repository holds several modules (Modules lists them, in release order). They are
// released together, at one version kept in the repository's VERSION file: every module
// requires its siblings at that version. Inside the repository each module also replaces its
// siblings by their directories, so that development, `go mod tidy` and `go test` work from the
// working tree before that version exists anywhere. A released module carries no replace
// directive (the go command refuses `go run pkg@version` and `go install pkg@version` for a
// module that has one), so the release form of a go.mod is the repository's with the siblings'
// replace directives dropped, and the release form of a go.sum is the repository's with the
// siblings' checksums added: what `go mod tidy` writes once the siblings are published.
//
// [Repo.WriteProxy] writes that form of every released module into a module proxy directory
// (GOPROXY=file://dir): for each module the version list, the .info, the .mod and the .zip,
// the zip holding what `git archive` of a commit of the working tree would hold, as the Go
// module mirror builds it from a tag. [Repo.WriteReleased] writes the same go.mod and go.sum
// files into the working tree, for the release commit that gets tagged.
package release
