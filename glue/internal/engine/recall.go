package engine

import (
	"context"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/glue/internal/readback"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/recall"
)

// RecallStore returns the recall store of one session: the glue's, over the artifact service it
// captured at Wire; nil when there is none (no artifact service, or not wired yet).
type RecallStore func(s compactor.Session) recall.Store

// recallState is what the recall tools need of the engine. Its zero value is recall off.
type recallState struct {
	mu     sync.Mutex
	stores RecallStore // nil: the recall tools are not in use
	// stored: stores returned a store once (an artifact service was wired; it stays wired)
	stored atomic.Bool
}

// recallWithoutArtifacts is the message of the recall_without_artifacts wiring problem.
const recallWithoutArtifacts = "the recall tools are given to an agent, but no artifact service was wired: every call of them " +
	"fails and truncated tool outputs are not saved. Pass the runner's artifact service (runner.Config.ArtifactService; " +
	"hooks/dbartifact keeps outputs in the sessions' database) to Hooks.Wire"

// RecallWithoutArtifacts is the wiring error of recall tools without an artifact service, for
// the glue's Wire to refuse such a runner.Config.
func RecallWithoutArtifacts() *adkctx.WiringError {
	return &adkctx.WiringError{Problem: "recall_without_artifacts", Message: recallWithoutArtifacts}
}

// checkRecallStore reports recall_without_artifacts when a request of session s declared the
// recall tools while they have no store to read.
func (e *Engine) checkRecallStore(s compactor.Session) {
	if e.recall.stored.Load() {
		return
	}
	stores := e.recallStores()
	if stores == nil {
		return
	}
	if stores(s) != nil {
		e.recall.stored.Store(true)
		return
	}
	e.WiringError("recall_without_artifacts", recallWithoutArtifacts)
}

// UseRecall turns on what the recall tools need (the glue calls it when the application asks for
// the tools): notes that name them in requests that declare them, the results a compaction shows
// as excerpts saved whole, and a history segment of the events each stored marker covers, all
// through stores.
func (e *Engine) UseRecall(stores RecallStore) {
	e.recall.mu.Lock()
	defer e.recall.mu.Unlock()
	e.recall.stores = stores
}

// recallStores returns the stores set by UseRecall; nil when the tools are not in use.
func (e *Engine) recallStores() RecallStore {
	e.recall.mu.Lock()
	defer e.recall.mu.Unlock()
	return e.recall.stores
}

// recallOutputs reports whether the agent of c's call declares read_saved_output (in its last
// request, before the recall step withheld what nothing could use yet), with the recall tools in
// use.
func (e *Engine) recallOutputs(c Call) bool {
	if e.recallStores() == nil {
		return false
	}
	st := e.state(keyOf(c))
	st.mu.Lock()
	defer st.mu.Unlock()
	cl, ok := st.calls.Get(callKey{c.InvocationID(), c.Branch(), c.AgentName()})
	return ok && cl.recallOutputs
}

// recallKeeper is the compactor's Recall: it keeps what a stored marker takes out of the view
// reachable through the recall tools' stores, and logs (never fails on) what it cannot keep.
type recallKeeper struct{ e *Engine }

var _ compactor.Recall = recallKeeper{}

func (k recallKeeper) store(s compactor.Session) recall.Store {
	if stores := k.e.recallStores(); stores != nil {
		return stores(s)
	}
	return nil
}

// SaveExcerpts implements compactor.Recall.
func (k recallKeeper) SaveExcerpts(ctx context.Context, s compactor.Session, m *compaction.Marker, events []compaction.Event) {
	st := k.store(s)
	if st == nil {
		return // the recall tools are not in use
	}
	results := plan.ExcerptsOf(events, m)
	if len(results) == 0 {
		return
	}
	n, err := readback.SaveExcerpts(ctx, st, results)
	if err != nil {
		k.failed(s, "recall: excerpted tool results not saved", err)
		return
	}
	k.e.log.Debug("recall: excerpted tool results saved", zap.String("session_id", s.ID), zap.Int("results", len(results)), zap.Int("outputs_saved", n))
}

// WriteHistory implements compactor.Recall.
func (k recallKeeper) WriteHistory(ctx context.Context, s compactor.Session, covered []compaction.Event, turns int) {
	st := k.store(s)
	if st == nil || len(covered) == 0 {
		return
	}
	seg, err := readback.WriteHistory(ctx, st, covered, turns)
	if err != nil {
		k.failed(s, "recall: history not written", err)
		return
	}
	if seg != nil {
		k.e.log.Debug("recall: history written", zap.String("session_id", s.ID), zap.String("artifact", seg.Name),
			zap.Int("turns", seg.Turns), zap.Int("entries", seg.Entries), zap.Int("bytes", seg.Bytes))
	}
}

// failed logs a failure to keep something for the recall tools: its kind and redacted message,
// never the conversation's text.
func (k recallKeeper) failed(s compactor.Session, msg string, err error) {
	kind, text := errkind.Of(err)
	k.e.log.Warn(msg, zap.String("session_id", s.ID), zap.String("error_kind", string(kind)), zap.String("error", text))
}

// RecallLimits are the bounds of the recall tools' results under this engine's truncation
// limits (Config.Truncation): a result is never cut and saved again. Results take at most
// 8 KiB and 200 lines (recall's defaults), less when the truncation limits are lower: 1 KiB
// under their bytes, four fifths of their lines. Under truncation limits too low for recall's
// smallest page (1 KiB, 20 lines) results take that page, and the truncation cuts them (without
// saving them again).
func (e *Engine) RecallLimits() readback.Limits {
	t := e.cfg.Truncation.WithDefaults()
	return readback.Limits{
		// At least 1: zero would mean recall's defaults, far over low truncation limits.
		MaxResultBytes: max(min(readback.DefaultMaxResultBytes, t.MaxBytes-1024), 1),
		MaxResultLines: max(min(readback.DefaultMaxResultLines, t.MaxLines*4/5), 1),
	}
}
