package agentsmd

import "fmt"

// Scope says where an instruction file sits (instructions.Source.Scope).
type Scope string

// Scopes of an instruction file.
const (
	ScopeGlobal  Scope = "global"  // the user-wide file (Config.GlobalFile)
	ScopeProject Scope = "project" // a file in a directory from the project root to the working directory
)

// Skip is a file or import that was not used, with the reason
// (instructions.Merged.Skipped).
type Skip struct {
	Path, Reason string
}

// WorkDirError reports an unusable working directory: missing, not a
// directory, or unresolvable. instructions.Loader.Load returns it.
type WorkDirError struct {
	WorkDir string
	Err     error
}

func (e *WorkDirError) Error() string {
	return fmt.Sprintf("agentsmd: working directory %q: %v", e.WorkDir, e.Err)
}

func (e *WorkDirError) Unwrap() error { return e.Err }
