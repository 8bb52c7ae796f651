package recall

import "github.com/adkctx/adkctx/internal/toolnames"

// The recall tools' names, as the model calls them. They are static: the tool list, and so the
// request prefix a provider caches, does not change while a session grows.
const (
	// ToolReadOutput reads a saved output by line or byte range.
	ToolReadOutput = toolnames.ReadOutput
	// ToolSearchOutputs searches one saved output, or every saved output of the session newest
	// first.
	ToolSearchOutputs = toolnames.SearchOutputs
	// ToolSearchHistory searches the turns that summaries cover.
	ToolSearchHistory = toolnames.SearchHistory
	// ToolReadTurn reads one covered turn.
	ToolReadTurn = toolnames.ReadTurn
)
