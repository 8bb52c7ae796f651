package replay

import (
	"context"
	"sync/atomic"

	"google.golang.org/adk/artifact"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/refs"
	"github.com/adkctx/adkctx/hooks/recalltools"
	"github.com/adkctx/adkctx/recall"
)

// The recall tools a missed reference can be reached with, as the report names them.
const (
	ReachOutputs = recall.ToolSearchOutputs
	ReachHistory = recall.ToolSearchHistory
)

// reacher answers, for a reference a request left out, whether one recall call with the
// reference as its exact query would return it: search_saved_outputs over every saved output of
// the session, else search_history over the summarized turns — through package recall on the
// run's own artifact service, as the tools would at that moment. A reference counts as
// returned when the result's text holds it as a token (so an id inside a longer one does not
// count). Answers are remembered until the artifact service stores something new.
type reacher struct {
	arts  *countingArtifacts
	store recall.Store
	memo  map[string]memo
}

type memo struct {
	gen   int64
	reach string
}

func newReacher(ca *countingArtifacts) *reacher {
	return &reacher{arts: ca, store: recalltools.SessionStore(ca, appName, userID, sessionID), memo: map[string]memo{}}
}

func (r *reacher) check(ctx context.Context, missed []string) []string {
	if len(missed) == 0 {
		return nil
	}
	gen := r.arts.saves.Load()
	out := make([]string, len(missed))
	for i, ref := range missed {
		if m, ok := r.memo[ref]; ok && m.gen == gen {
			out[i] = m.reach
			continue
		}
		reach := ""
		if res, err := recall.SearchOutputs(ctx, r.store, recall.SearchRequest{Query: ref}, recall.Limits{}); err == nil && holds(res.Text, ref) {
			reach = ReachOutputs
		} else if res, err := recall.SearchHistory(ctx, r.store, recall.Viewer{}, recall.HistoryRequest{Query: ref}, recall.Limits{}); err == nil && holds(res.Text, ref) {
			reach = ReachHistory
		}
		r.memo[ref] = memo{gen: gen, reach: reach}
		out[i] = reach
	}
	return out
}

func holds(text, ref string) bool {
	found := false
	refs.Each(text, func(t string) { found = found || t == ref })
	return found
}

// countingArtifacts is the run's artifact service, counting what it stores so the reacher knows
// when an answer may have changed.
type countingArtifacts struct {
	artifact.Service
	saves atomic.Int64
}

func (c *countingArtifacts) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	c.saves.Add(1)
	return c.Service.Save(ctx, req)
}
