package readback

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/adkctx/adkctx/recall"
)

// args are the recall tools' arguments, as the model sends them (the union of the four tools';
// each tool reads its own).
type args struct {
	Name    string `json:"name"`
	Range   string `json:"range"`
	Query   string `json:"query"`
	Regexp  bool   `json:"regexp"`
	Context int    `json:"context"`
	Cursor  string `json:"cursor"`
	Before  int    `json:"before"`
	Turn    string `json:"turn"`
	Whole   bool   `json:"whole"`
	From    int    `json:"from"`
	Entry   int    `json:"entry"`
}

// Run runs one call of the recall tool named tool with raw, its arguments (a value that encodes
// to the tool's JSON object), on st as v sees it. An unknown tool or arguments that do not
// decode are an input error.
func Run(ctx context.Context, st recall.Store, tool string, raw any, v Viewer, lim Limits) (*Result, error) {
	var a args
	if raw != nil {
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, inputErrorf("%s: the arguments do not encode as JSON: %v", tool, err)
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, inputErrorf("%s: the arguments are not the tool's: %v", tool, err)
		}
	}
	switch tool {
	case recall.ToolReadOutput:
		return ReadOutput(ctx, st, a.Name, a.Range, lim)
	case recall.ToolSearchOutputs:
		return SearchOutputs(ctx, st, SearchRequest{Query: a.Query, Regexp: a.Regexp, Name: a.Name, Context: a.Context, Cursor: a.Cursor}, lim)
	case recall.ToolSearchHistory:
		return SearchHistory(ctx, st, v, HistoryRequest{Query: a.Query, Before: a.Before}, lim)
	case recall.ToolReadTurn:
		return ReadTurn(ctx, st, v, TurnRequest{Turn: a.Turn, Whole: a.Whole, From: a.From, Entry: a.Entry, Range: a.Range}, lim)
	}
	return nil, fmt.Errorf("recall: %q is not a recall tool", tool)
}
