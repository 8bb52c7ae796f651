package engine

import (
	"slices"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/exact"
	"github.com/adkctx/adkctx/processors/request"
)

// Bounds of the requests a session keeps for an LLM summarizer (plan.Selection.Sent):
// what a provider's prompt cache may still hold of them.
const (
	// maxSentRequests is how many of a session's newest requests are kept: a compaction triggered
	// at the start of a turn, or after a trimmed request, finds its covered events in one a few
	// calls back.
	maxSentRequests = 8
	// sentTTL is how long a request is kept after it was sent: providers drop a cached prefix
	// minutes after its last use (OpenAI: 5–10 minutes idle; Anthropic: 5 minutes by default;
	// Gemini's implicit cache: unspecified), so an older one would be billed in full anyway.
	sentTTL = 5 * time.Minute
	// sentWindows bounds the distinct contents kept, in multiples of the model's usable input
	// (requests that extend each other share their contents).
	sentWindows = 2
)

// sentRequest is one request as sent, with its contents' prints (their sizes are kept with the
// shared contents, keptContent).
type sentRequest struct {
	req    *request.LLMRequest
	prints []uint64
	at     time.Time
}

// sentLog is the session's newest requests as sent, oldest first: at most maxSentRequests,
// none older than ttl, holding at most sentWindows × the usable input in distinct contents. A
// content equal to one already kept (the same print, then every field compared) is kept once.
type sentLog struct {
	entries []sentRequest
	ttl     time.Duration
	expiry  *time.Timer // clears the log ttl after its newest request, so an idle session holds none
	// kept indexes the contents the entries hold by print, with the number of places that
	// hold one of that print; distinct is the estimated size of the distinct prints.
	kept     map[uint64]keptContent
	distinct int
}

// keptContent is a content the log holds, the places that hold its print, and its size.
type keptContent struct {
	content *genai.Content
	refs    int
	size    int
}

// add keeps req (prints and sizes of its contents, sent at now), sharing the contents it has in
// common with the requests kept, and drops what the bounds no longer allow; usable is the
// model's usable input. A content is shared only when it equals the kept one in every field
// (exact.Equal), not on its print alone: the summarizer is sent what the agent was sent. (Two
// contents of one print that are not equal, a 64-bit collision, are both kept, and the bound
// counts the size of one.)
func (l *sentLog) add(req *request.LLMRequest, prints []uint64, sizes []int, usable int, now time.Time) {
	if l.kept == nil {
		l.kept = map[uint64]keptContent{}
	}
	for i, p := range prints {
		k, ok := l.kept[p]
		switch {
		case !ok:
			k = keptContent{content: req.Contents[i], size: sizes[i]}
			l.distinct += sizes[i]
		case exact.Equal(k.content, req.Contents[i]):
			req.Contents[i] = k.content
		}
		k.refs++
		l.kept[p] = k
	}
	l.entries = append(l.entries, sentRequest{req: req, prints: prints, at: now})
	l.prune(usable, now)
}

// prune drops the oldest requests past the bounds (the newest one stays).
func (l *sentLog) prune(usable int, now time.Time) {
	drop := 0
	for drop < len(l.entries)-1 && (len(l.entries)-drop > maxSentRequests || now.Sub(l.entries[drop].at) >= l.ttl ||
		l.distinct > sentWindows*usable) {
		l.release(l.entries[drop])
		drop++
	}
	clear(l.entries[:drop])
	l.entries = slices.Delete(l.entries, 0, drop)
}

// release takes e's contents out of the index.
func (l *sentLog) release(e sentRequest) {
	for _, p := range e.prints {
		k := l.kept[p]
		if k.refs--; k.refs > 0 {
			l.kept[p] = k
			continue
		}
		delete(l.kept, p)
		l.distinct -= k.size
	}
}

// recent returns the requests sent within ttl before now, newest first.
func (l *sentLog) recent(now time.Time) []*request.LLMRequest {
	var out []*request.LLMRequest
	for i := len(l.entries) - 1; i >= 0 && now.Sub(l.entries[i].at) < l.ttl; i-- {
		out = append(out, l.entries[i].req)
	}
	return out
}

// armExpiry (re)starts the timer that clears the log ttl from now, under mu (which guards l).
func (l *sentLog) armExpiry(mu *sync.Mutex) {
	if l.expiry != nil {
		l.expiry.Reset(l.ttl)
		return
	}
	l.expiry = time.AfterFunc(l.ttl, func() {
		mu.Lock()
		defer mu.Unlock()
		l.expire(time.Now())
	})
}

// expire clears the log when its newest request is older than ttl at now.
func (l *sentLog) expire(now time.Time) {
	if n := len(l.entries); n > 0 && now.Sub(l.entries[n-1].at) >= l.ttl {
		l.clear()
	}
}

// clear drops every request.
func (l *sentLog) clear() {
	clear(l.entries)
	l.entries, l.kept, l.distinct = nil, nil, 0
}

// stop clears the log and stops its expiry timer (the session was deleted).
func (l *sentLog) stop() {
	if l.expiry != nil {
		l.expiry.Stop()
	}
	l.clear()
}
