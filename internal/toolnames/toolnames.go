// Package toolnames names the recall tools (package recall) where packages that recall itself
// imports need them: the compaction ledger leaves recall calls out of its counts.
package toolnames

// The recall tools' names (recall.ToolReadOutput, …).
const (
	ReadOutput    = "read_saved_output"
	SearchOutputs = "search_saved_outputs"
	SearchHistory = "search_history"
	ReadTurn      = "read_turn"
)

// IsRecall reports whether name is one of the recall tools.
func IsRecall(name string) bool {
	switch name {
	case ReadOutput, SearchOutputs, SearchHistory, ReadTurn:
		return true
	}
	return false
}
