package reliability

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/zap"
	"google.golang.org/adk/session"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
)

// The README's "goroutines flat over 10,000 invocations" as a test that can fail: goroutines are
// counted, not timed. In a synctest bubble, synctest.Wait returns once every goroutine of the
// bubble has exited or is blocked for good, so the count after a batch of invocations is exact:
// no goroutine that is still ending is counted by luck, and only the bubble's are counted (not a
// finalizer the runtime happens to be running). After 200 invocations over ten sessions, each
// with compactions in the background, there are no more goroutines than after the first ten;
// after Close, none of the bubble's is left (TestMain's leak check fails the package otherwise).
// BenchmarkLongSessionIsFlat measures the same over 10,000 invocations, with the heap.
func TestGoroutinesStayFlat(t *testing.T) {
	const warm, invocations, sessions = 10, 200, 10
	synctest.Test(t, func(t *testing.T) {
		s := wire(t, &chatModel{name: "m", answer: strings.Repeat("detail ", 20)},
			adkctx.Config{Compaction: &compaction.Config{Interval: 5, Summarizer: &compaction.ExtractiveSummarizer{}}}, session.InMemoryService(), nil)
		var afterWarm int
		for i := range invocations {
			if i == warm {
				synctest.Wait()
				afterWarm = bubbleGoroutines()
			}
			if err := s.send(t, fmt.Sprint("s", i%sessions), fmt.Sprintf("turn %d: %s", i, strings.Repeat("context ", 10))); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if afterWarm == 0 {
			t.Fatal("no goroutine counted in the bubble: bubbleGoroutines cannot see them, the check would pass whatever")
		}
		if n := bubbleGoroutines(); n > afterWarm {
			t.Errorf("%d goroutines after %d invocations, %d after %d: goroutines grow with the session", n, invocations, afterWarm, warm)
		}
		if n := s.logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).Len(); n == 0 {
			t.Error("no compaction stored a marker: the background work the count is about did not happen")
		}
	})
}

// bubbleGoroutines counts the goroutines of the calling goroutine's synctest bubble, from the
// headers of runtime.Stack ("goroutine 7 [chan receive (durable), synctest bubble 1]:").
func bubbleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for line := range strings.Lines(string(buf)) {
		if strings.HasPrefix(line, "goroutine ") && strings.Contains(line, "synctest bubble") {
			count++
		}
	}
	return count
}
