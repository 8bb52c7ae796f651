package replay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"google.golang.org/adk/artifact"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/refs"
	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/recall"
)

// The recall tools a missed reference can be reached with, as the report names them.
const (
	ReachOutputs = recall.ToolSearchOutputs
	ReachHistory = recall.ToolSearchHistory
)

// reacher answers, for a reference a request left out, whether one recall call with the
// reference as its exact query would return it: search_saved_outputs over every saved output of
// the session, else search_history over the summarized turns — run by adkctx's engine (package
// glue) on the run's own artifact service, as the tools would at that moment. A reference counts as
// returned when the result's text holds it as a token (so an id inside a longer one does not
// count). Answers are remembered until the artifact service stores something new.
type reacher struct {
	arts   *countingArtifacts
	engine *glue.Engine
	store  recall.Store
	memo   map[string]memo
}

type memo struct {
	gen   int64
	reach string
}

func newReacher(ca *countingArtifacts) (*reacher, error) {
	e, err := glue.New(adkctx.Config{}) // the default limits, as the run's own
	if err != nil {
		return nil, err
	}
	return &reacher{arts: ca, engine: e, store: &sessionArtifacts{svc: ca, loaded: map[string]*loaded{}}, memo: map[string]memo{}}, nil
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
		if r.returns(ctx, ReachOutputs, ref) {
			reach = ReachOutputs
		} else if r.returns(ctx, ReachHistory, ref) {
			reach = ReachHistory
		}
		r.memo[ref] = memo{gen: gen, reach: reach}
		out[i] = reach
	}
	return out
}

// returns reports whether a call of tool with ref as its query returns ref.
func (r *reacher) returns(ctx context.Context, tool, ref string) bool {
	text, err := r.engine.Recall(ctx, nil, glue.RecallCall{Tool: tool, Args: map[string]any{"query": ref}, Store: r.store})
	return err == nil && holds(text, ref)
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

// sessionArtifacts is the replayed session's saved outputs in the run's in-memory artifact
// service, as recall reads them: each version loaded whole once and split into chunks.
type sessionArtifacts struct {
	svc    artifact.Service
	loaded map[string]*loaded // name@version; the reacher calls one at a time
}

type loaded struct {
	lay    *recall.Layout
	chunks [][]byte
}

func (s *sessionArtifacts) load(ctx context.Context, name string, version int64) (*loaded, error) {
	id := fmt.Sprintf("%s@%d", name, version)
	if l := s.loaded[id]; l != nil {
		return l, nil
	}
	resp, err := s.svc.Load(ctx, &artifact.LoadRequest{AppName: appName, UserID: userID, SessionID: sessionID, FileName: name, Version: version})
	if err != nil {
		return nil, err
	}
	data, mime := []byte(resp.Part.Text), "text/plain"
	if resp.Part.InlineData != nil {
		data, mime = resp.Part.InlineData.Data, resp.Part.InlineData.MIMEType
	}
	lay, chunks := recall.Split(data, 0)
	lay.Version, lay.MIMEType = version, mime
	l := &loaded{lay: lay, chunks: chunks}
	s.loaded[id] = l
	return l, nil
}

func (s *sessionArtifacts) Layout(ctx context.Context, name string) (*recall.Layout, error) {
	meta, err := s.svc.GetArtifactVersion(ctx, &artifact.GetArtifactVersionRequest{AppName: appName, UserID: userID, SessionID: sessionID, FileName: name})
	if err != nil {
		return nil, err
	}
	l, err := s.load(ctx, name, meta.ArtifactVersion.Version)
	if err != nil {
		return nil, err
	}
	lay := *l.lay
	return &lay, nil
}

func (s *sessionArtifacts) ReadChunks(ctx context.Context, name string, version int64, first, count int) ([][]byte, error) {
	l, err := s.load(ctx, name, version)
	if err != nil {
		return nil, err
	}
	if first < 0 || count < 0 || first+count > len(l.chunks) {
		return nil, fmt.Errorf("replay: chunks %d+%d of %q: out of range", first, count, name)
	}
	return l.chunks[first : first+count], nil
}

// Recent lists by name, newest first: the in-memory service records no times, and recall's
// names sort history segments by number.
func (s *sessionArtifacts) Recent(ctx context.Context, prefix string, skip, limit int) ([]recall.OutputInfo, error) {
	resp, err := s.svc.List(ctx, &artifact.ListRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	var out []recall.OutputInfo
	for _, name := range resp.FileNames {
		if strings.HasPrefix(name, prefix) {
			out = append(out, recall.OutputInfo{Name: name})
		}
	}
	slices.SortFunc(out, func(a, b recall.OutputInfo) int { return strings.Compare(b.Name, a.Name) })
	if skip >= len(out) {
		return nil, nil
	}
	return out[skip:min(len(out), skip+limit)], nil
}

// Save and Delete: the reacher only reads.
func (s *sessionArtifacts) Save(context.Context, string, []byte, string) (int64, error) {
	return 0, fmt.Errorf("replay: the reacher does not save")
}

func (s *sessionArtifacts) Delete(context.Context, string, int64) error {
	return fmt.Errorf("replay: the reacher does not delete")
}
