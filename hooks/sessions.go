package hooks

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"weak"

	"google.golang.org/adk/model"

	"github.com/adkctx/adkctx/budget"
)

// defaultMaxSessions bounds the per-session state kept in memory; the least recently used
// session's state is dropped first (its accounting can be rebuilt from its events with
// budget.ReportFromEvents).
const defaultMaxSessions = 10_000

// maxCallsPerSession bounds the model calls remembered per session (see sessionState.calls).
const maxCallsPerSession = 16

// callState is what the callbacks remember about the latest model call of one agent in one
// invocation (one branch): model calls of one agent in one invocation are sequential, while
// invocations of one session, and the branches of a parallel agent, may run concurrently.
type callState struct {
	// lastRequest is the request last processed, so that a request seen by both the plugin and
	// an agent callback is processed once. It is weak: a request (the whole history) is not kept
	// alive once adk-go is done with it, and a new request allocated where a collected one lived
	// never compares equal to it.
	lastRequest weak.Pointer[model.LLMRequest]
	// pendingEstimate is the raw estimate of the request last sent, waiting for the model's
	// reported prompt count to calibrate against.
	pendingEstimate int
	// model and limits of the request last sent.
	model  string
	limits budget.Limits

	lastUse uint64
}

// callKey names the model calls of one agent in one branch of one invocation.
func callKey(invocationID, branch, agentName string) string {
	return invocationID + "\x00" + branch + "\x00" + agentName
}

// sessionState is what the callbacks remember about one session between calls.
type sessionState struct {
	// limits of the model the session last used (for Usage).
	limits budget.Limits
	// calls holds the state of the calls in flight, by callKey; at most maxCallsPerSession, the
	// least recently used dropped first.
	calls map[string]*callState
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

// peek runs f on the session's state under the table's lock if the session is known; it creates
// nothing, so reads (Usage) cannot evict the state of active sessions.
func (t *sessionTable) peek(key string, f func(*sessionState)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st, ok := t.m[key]; ok {
		f(st)
	}
}

// forgetInvocation drops the call states of a finished invocation. Call it inside with.
func (st *sessionState) forgetInvocation(invocationID string) {
	prefix := invocationID + "\x00"
	for k := range st.calls {
		if strings.HasPrefix(k, prefix) {
			delete(st.calls, k)
		}
	}
}

// call returns the state of the call named key, creating it if needed. Call it inside with.
func (t *sessionTable) call(st *sessionState, key string) *callState {
	c, ok := st.calls[key]
	if !ok {
		if st.calls == nil {
			st.calls = map[string]*callState{}
		}
		if len(st.calls) >= maxCallsPerSession {
			oldest := ""
			for k, v := range st.calls {
				if oldest == "" || v.lastUse < st.calls[oldest].lastUse {
					oldest = k
				}
			}
			delete(st.calls, oldest)
		}
		c = &callState{}
		st.calls[key] = c
	}
	c.lastUse = t.clock
	return c
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
