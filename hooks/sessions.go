package hooks

import (
	"cmp"
	"slices"
	"sync"

	"google.golang.org/adk/model"

	"github.com/adkctx/adkctx/budget"
)

// defaultMaxSessions bounds the per-session state kept in memory; the least recently used
// session's state is dropped first (its accounting can be rebuilt from its events with
// budget.ReportFromEvents).
const defaultMaxSessions = 10_000

// sessionState is what the callbacks remember about one session between calls.
type sessionState struct {
	model  string
	limits budget.Limits
	// lastRequest is the request last processed, so that a request seen by both the plugin and
	// an agent callback is processed once.
	lastRequest *model.LLMRequest
	// pendingEstimate is the raw estimate of the request last sent, waiting for the model's
	// reported prompt count to calibrate against.
	pendingEstimate int
	// compactionDue is set when a request passed the soft limit; compactionTokenLimit is the soft
	// limit in the compactor's unit (raw estimate of the history alone).
	compactionDue        bool
	compactionTokenLimit int

	lastUse uint64
}

// sessionTable is a bounded, concurrency-safe map of session states.
type sessionTable struct {
	mu    sync.Mutex
	max   int
	clock uint64
	m     map[string]*sessionState
}

func newSessionTable(max int) *sessionTable {
	return &sessionTable{max: max, m: map[string]*sessionState{}}
}

// with runs f on the session's state under the table's lock, creating the state if needed.
func (t *sessionTable) with(key string, f func(*sessionState)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.m[key]
	if !ok {
		if len(t.m) >= t.max {
			t.evictLocked()
		}
		st = &sessionState{}
		t.m[key] = st
	}
	t.clock++
	st.lastUse = t.clock
	f(st)
}

// evictLocked drops the least recently used tenth of the table: O(n log n) once every n/10 new
// sessions, so O(log n) amortized per session.
func (t *sessionTable) evictLocked() {
	keys := make([]string, 0, len(t.m))
	for k := range t.m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(t.m[a].lastUse, t.m[b].lastUse) })
	for _, k := range keys[:max(len(keys)/10, 1)] {
		delete(t.m, k)
	}
}

func sessionKey(appName, userID, sessionID string) string {
	return appName + "\x00" + userID + "\x00" + sessionID
}
