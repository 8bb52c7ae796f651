package recalltools

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/adk/artifact"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"

	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/recall"
)

// Config configures the recall tools.
type Config struct {
	// Engine runs the calls.
	Engine *glue.Engine
	// Artifacts returns the artifact service that holds the saved outputs and history segments
	// at each call (the one Wire captured); nil fails the call with an error the model reads.
	Artifacts func() artifact.Service
	// Timeout bounds each call. Default 10 s.
	Timeout time.Duration
}

// result is what every recall tool returns.
type result struct {
	Result string `json:"result"`
}

// readArgs are read_saved_output's arguments.
type readArgs struct {
	Name  string `json:"name" jsonschema:"the saved output's name, exactly as the truncation note gives it"`
	Range string `json:"range,omitempty" jsonschema:"lines to read: '120-180', '3000' (a page from line 3000), '-50' (the last 50), or bytes: 'bytes=0-4095'; default the first page"`
}

// searchArgs are search_saved_outputs' arguments.
type searchArgs struct {
	Query   string `json:"query" jsonschema:"text to find (ASCII letters match either case), or an RE2 regular expression when regexp is true"`
	Regexp  bool   `json:"regexp,omitempty" jsonschema:"query is a regular expression"`
	Name    string `json:"name,omitempty" jsonschema:"search only this saved output; default every saved output of this session, newest first"`
	Context int    `json:"context,omitempty" jsonschema:"lines shown before and after each match (default 2, at most 10)"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"continue a search that stopped early: the cursor its result gave"`
}

// historyArgs are search_history's arguments.
type historyArgs struct {
	Query  string `json:"query" jsonschema:"words to find in the earlier, summarized turns: exact names, ids, numbers, error text"`
	Before int    `json:"before,omitempty" jsonschema:"continue a search that stopped early: the value its result gave"`
}

// turnArgs are read_turn's arguments.
type turnArgs struct {
	Turn  string `json:"turn" jsonschema:"the turn's label as search_history gives it, like 'turn 7, entry 3'"`
	Whole bool   `json:"whole,omitempty" jsonschema:"show tool results whole instead of as excerpts"`
	From  int    `json:"from,omitempty" jsonschema:"first entry to show (from 1)"`
	Entry int    `json:"entry,omitempty" jsonschema:"show only this entry, paged by range"`
	Range string `json:"range,omitempty" jsonschema:"with entry: lines '120-180' or bytes 'bytes=0-4095' of that entry"`
}

// New returns the recall tools, in the order the model reads them: read_saved_output,
// search_saved_outputs, search_history, read_turn.
func New(cfg Config) ([]tool.Tool, error) {
	if cfg.Engine == nil || cfg.Artifacts == nil {
		return nil, errors.New("recalltools: Config.Engine and Config.Artifacts are required")
	}
	r := &recaller{cfg: cfg}
	read, err1 := functiontool.New(functiontool.Config{Name: recall.ToolReadOutput, Description: readDescription}, call[readArgs](r, recall.ToolReadOutput))
	search, err2 := functiontool.New(functiontool.Config{Name: recall.ToolSearchOutputs, Description: searchDescription}, call[searchArgs](r, recall.ToolSearchOutputs))
	history, err3 := functiontool.New(functiontool.Config{Name: recall.ToolSearchHistory, Description: historyDescription}, call[historyArgs](r, recall.ToolSearchHistory))
	turn, err4 := functiontool.New(functiontool.Config{Name: recall.ToolReadTurn, Description: turnDescription}, call[turnArgs](r, recall.ToolReadTurn))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, fmt.Errorf("recalltools: %w", err)
	}
	return []tool.Tool{read, search, history, turn}, nil
}

const (
	readDescription = "Read part of a full tool output that was cut short in the conversation and saved " +
		"(the note says 'full output saved as <name>'), by line range, without running the tool again. " +
		"The result says which lines of how many it shows and the range of the next page."
	searchDescription = "Search saved full tool outputs of this session (one, or all of them newest first) " +
		"for a substring or regular expression; shows matching lines with line numbers and context."
	historyDescription = "Search the earlier turns of this conversation that were summarized (messages, " +
		"tool calls and their results, word for word). Returns ranked excerpts, exact matches first, each with its " +
		"turn label (turn 1 is the first user message)."
	turnDescription = "Read one earlier, summarized turn by its label from search_history: the user's " +
		"message, the tool calls, their results (as excerpts unless whole is true) and the answer."
)

// recaller runs the tools' calls.
type recaller struct {
	cfg Config
}

// call returns the function of the tool name: the engine runs it on the calling session's
// saved outputs.
func call[A any](r *recaller, name string) functiontool.Func[A, result] {
	return func(tc toolContext, args A) (result, error) {
		var st recall.Store
		if svc := r.cfg.Artifacts(); svc != nil {
			st = SessionStore(svc, tc.AppName(), tc.UserID(), tc.SessionID())
		}
		text, err := r.cfg.Engine.Recall(tc, tc, glue.RecallCall{Tool: name, Args: args, Store: st, Scope: scope(tc), Timeout: r.cfg.Timeout})
		return result{Result: text}, err
	}
}
