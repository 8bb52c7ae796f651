package recalltools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"

	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/recall"
)

// Config configures the recall tools.
type Config struct {
	// Artifacts holds the saved outputs and history segments: the runner's artifact service.
	// Required unless ArtifactsFrom is set.
	Artifacts artifact.Service
	// ArtifactsFrom, when set, returns the artifact service at each call instead of Artifacts
	// (hooks' RecallTools returns the one Wire captured); a nil service fails the call with an
	// error the model reads.
	ArtifactsFrom func() artifact.Service
	// Limits bound each call; zero fields take recall's defaults (results at most 8 KiB, under
	// adkctx's default 10 KiB truncation limit, so a recall result is never cut and saved
	// again). Set Limits.MaxResultBytes below the truncation limit when you lower that.
	Limits recall.Limits
	// Timeout bounds each call. Default 10 s. A search of saved outputs stops before it (with
	// time left to return what it found and the cursor that continues) when it is shorter than
	// Limits.MaxScanTime.
	Timeout time.Duration
	// Logger receives one warning per call that failed on storage (tool, session, error kind;
	// never the query or the result). Nil: no logs.
	Logger *zap.Logger
}

// DefaultTimeout is Config.Timeout's default.
const DefaultTimeout = 10 * time.Second

// Result is what every recall tool returns.
type Result struct {
	Result string `json:"result"`
}

// ReadArgs are read_saved_output's arguments.
type ReadArgs struct {
	Name  string `json:"name" jsonschema:"the saved output's name, exactly as the truncation note gives it"`
	Range string `json:"range,omitempty" jsonschema:"lines to read: '120-180', '3000' (a page from line 3000), '-50' (the last 50), or bytes: 'bytes=0-4095'; default the first page"`
}

// SearchArgs are search_saved_outputs' arguments.
type SearchArgs struct {
	Query   string `json:"query" jsonschema:"text to find (ASCII letters match either case), or an RE2 regular expression when regexp is true"`
	Regexp  bool   `json:"regexp,omitempty" jsonschema:"query is a regular expression"`
	Name    string `json:"name,omitempty" jsonschema:"search only this saved output; default every saved output of this session, newest first"`
	Context int    `json:"context,omitempty" jsonschema:"lines shown before and after each match (default 2, at most 10)"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"continue a search that stopped early: the cursor its result gave"`
}

// HistoryArgs are search_history's arguments.
type HistoryArgs struct {
	Query  string `json:"query" jsonschema:"words to find in the earlier, summarized turns: exact names, ids, numbers, error text"`
	Before int    `json:"before,omitempty" jsonschema:"continue a search that stopped early: the value its result gave"`
}

// TurnArgs are read_turn's arguments.
type TurnArgs struct {
	Turn  string `json:"turn" jsonschema:"the turn's label as search_history gives it, like 'turn 7, entry 3'"`
	Whole bool   `json:"whole,omitempty" jsonschema:"show tool results whole instead of as excerpts"`
	From  int    `json:"from,omitempty" jsonschema:"first entry to show (from 1)"`
	Entry int    `json:"entry,omitempty" jsonschema:"show only this entry, paged by range"`
	Range string `json:"range,omitempty" jsonschema:"with entry: lines '120-180' or bytes 'bytes=0-4095' of that entry"`
}

// New returns the recall tools, in the order of recall.ToolNames.
func New(cfg Config) ([]tool.Tool, error) {
	if cfg.Artifacts == nil && cfg.ArtifactsFrom == nil {
		return nil, errors.New("recalltools: Config.Artifacts is required (the runner's artifact service)")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	r := &recaller{cfg: cfg}
	read, err1 := functiontool.New(functiontool.Config{Name: recall.ToolReadOutput, Description: readDescription}, r.read)
	search, err2 := functiontool.New(functiontool.Config{Name: recall.ToolSearchOutputs, Description: searchDescription}, r.search)
	history, err3 := functiontool.New(functiontool.Config{Name: recall.ToolSearchHistory, Description: historyDescription}, r.history)
	turn, err4 := functiontool.New(functiontool.Config{Name: recall.ToolReadTurn, Description: turnDescription}, r.turn)
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

// errNoArtifacts is a call's error when there is no artifact service to read.
var errNoArtifacts = errors.New("the recall tools cannot read anything here: this application keeps no saved outputs or " +
	"earlier turns (no artifact service is wired: its operator must pass runner.Config.ArtifactService to adkctx's Wire); " +
	"answer from the conversation as it is")

// recaller runs the tools' calls.
type recaller struct {
	cfg Config
}

func (r *recaller) read(tc toolContext, args ReadArgs) (Result, error) {
	return r.run(tc, recall.ToolReadOutput, func(ctx context.Context, st recall.Store) (*recall.Result, error) {
		return recall.ReadOutput(ctx, st, args.Name, args.Range, r.cfg.Limits)
	})
}

func (r *recaller) search(tc toolContext, args SearchArgs) (Result, error) {
	return r.run(tc, recall.ToolSearchOutputs, func(ctx context.Context, st recall.Store) (*recall.Result, error) {
		return recall.SearchOutputs(ctx, st, recall.SearchRequest{Query: args.Query, Regexp: args.Regexp, Name: args.Name, Context: args.Context, Cursor: args.Cursor}, r.cfg.Limits)
	})
}

func (r *recaller) history(tc toolContext, args HistoryArgs) (Result, error) {
	return r.run(tc, recall.ToolSearchHistory, func(ctx context.Context, st recall.Store) (*recall.Result, error) {
		return recall.SearchHistory(ctx, st, viewer(tc), recall.HistoryRequest{Query: args.Query, Before: args.Before}, r.cfg.Limits)
	})
}

func (r *recaller) turn(tc toolContext, args TurnArgs) (Result, error) {
	return r.run(tc, recall.ToolReadTurn, func(ctx context.Context, st recall.Store) (*recall.Result, error) {
		return recall.ReadTurn(ctx, st, viewer(tc), recall.TurnRequest{Turn: args.Turn, Whole: args.Whole, From: args.From, Entry: args.Entry, Range: args.Range}, r.cfg.Limits)
	})
}

// run calls f on the calling session's store, within the timeout. An *InputError comes back as
// the tool's error for the model to read; a storage failure too, after one log entry that holds
// no query and no result.
func (r *recaller) run(tc toolContext, name string, f func(context.Context, recall.Store) (*recall.Result, error)) (Result, error) {
	svc := r.cfg.Artifacts
	if r.cfg.ArtifactsFrom != nil {
		svc = r.cfg.ArtifactsFrom()
	}
	if svc == nil {
		r.cfg.Logger.Warn("recall tool failed", zap.String("tool", name), zap.String("session_id", tc.SessionID()),
			zap.String("invocation_id", tc.InvocationID()), zap.String("error_kind", "no_artifact_service"))
		return Result{}, errNoArtifacts
	}
	ctx, cancel := context.WithTimeout(tc, r.cfg.Timeout)
	defer cancel()
	st := SessionStore(svc, tc.AppName(), tc.UserID(), tc.SessionID())
	res, err := f(ctx, st)
	switch {
	case err == nil:
		return Result{Result: res.Text}, nil
	case recall.IsInputError(err):
		return Result{}, err
	case ctx.Err() != nil && tc.Err() == nil:
		// Our timeout, whatever error the store turned it into.
		err = fmt.Errorf("%s took longer than %s and was stopped: narrow the range or the query", name, r.cfg.Timeout)
	}
	kind, msg := glue.ErrorKind(err)
	r.cfg.Logger.Warn("recall tool failed", zap.String("tool", name), zap.String("session_id", tc.SessionID()),
		zap.String("invocation_id", tc.InvocationID()), zap.String("error_kind", kind), zap.String("error", msg))
	// The model reads the whole message (names and numbers, never another session's data);
	// the log keeps errkind's redacted form.
	return Result{}, fmt.Errorf("%s failed: %w", name, err)
}
