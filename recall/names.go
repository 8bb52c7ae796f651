package recall

// The recall tools' names, as the model calls them. They are static: the tool list, and so the
// request prefix a provider caches, does not change while a session grows.
const (
	// ToolReadOutput reads a saved output by line or byte range.
	ToolReadOutput = "read_saved_output"
	// ToolSearchOutputs searches one saved output, or every saved output of the session newest
	// first.
	ToolSearchOutputs = "search_saved_outputs"
	// ToolSearchHistory searches the turns that summaries cover.
	ToolSearchHistory = "search_history"
	// ToolReadTurn reads one covered turn.
	ToolReadTurn = "read_turn"
)
