package geminirun_test

// The only place these tests touch adkctx's public API (hooks, compaction): keep it that way, so
// a change of that API is adapted here.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
)

// wired is adk-go's runner with adkctx wired in as example/wiring.go does.
type wired struct {
	runner *runner.Runner
	hooks  *hooks.Hooks
	base   session.Service // the storage under adkctx's session wrapper
	logs   *observer.ObservedLogs
}

// compactionOptions configures the compaction the helper turns on (nil: off).
type compactionOptions struct {
	interval   int
	summarizer model.LLM // nil: the default extractive summarizer
	noFallback bool
}

// wire builds hooks.New with an observed logger and wires it into a runner with Hooks.Wire over
// an in-memory service (compaction synchronous, so the tests do not depend on timing).
func wire(t *testing.T, llm model.LLM, comp *compactionOptions, tools ...tool.Tool) *wired {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg := adkctx.Config{Logger: zap.New(core)}
	if comp != nil {
		cc := &compaction.Config{Interval: comp.interval, NoFallback: comp.noFallback, Synchronous: true,
			Summarizer: &compaction.ExtractiveSummarizer{}}
		if comp.summarizer != nil {
			cc.Summarizer = &compaction.LLMSummarizer{Model: hooks.SummarizerModel(comp.summarizer)}
		}
		cfg.Compaction = cc
	}
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatalf("hooks.New: %v", err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "forecaster", Model: llm, Instruction: instruction, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	base := session.InMemoryService()
	rc, err := h.Wire(runner.Config{
		AppName:           appName,
		Agent:             a,
		SessionService:    base,
		ArtifactService:   artifact.InMemoryService(),
		AutoCreateSession: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &wired{runner: r, hooks: h, base: base, logs: logs}
}

// usageReport is the session's accounting as the hooks report it.
func (w *wired) usageReport(sessionID string) budget.Report {
	return w.hooks.Usage(appName, userID, sessionID)
}

// markers returns the compaction markers stored in the base service, oldest first.
func (w *wired) markers(t *testing.T, sessionID string) []*compaction.Marker {
	t.Helper()
	var out []*compaction.Marker
	for _, e := range stored(t, w.base, sessionID) {
		if e.Content != nil || e.CustomMetadata[compaction.MetadataKey] == nil {
			continue
		}
		m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata})
		if err != nil {
			t.Fatalf("stored marker does not read back: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// summaryHeader starts the content that carries a compaction summary in a request.
const summaryHeader = compaction.SummaryHeader

// summarize runs compaction.LLMSummarizer over llm with a short two-turn input.
func summarize(t *testing.T, llm model.LLM, texts ...string) (*compaction.Summary, error) {
	t.Helper()
	s := &compaction.LLMSummarizer{Model: hooks.SummarizerModel(llm)}
	return s.Summarize(t.Context(), compaction.SummaryInput{Events: textEvents(texts...)})
}

// summarizerName is the name LLMSummarizer reports for a model.
func summarizerName(llm model.LLM) string {
	return (&compaction.LLMSummarizer{Model: hooks.SummarizerModel(llm)}).Name()
}

// textEvents returns events alternating between the user and the agent, one text each.
func textEvents(texts ...string) []compaction.Event {
	var out []compaction.Event
	for i, text := range texts {
		author, role := "user", genai.Role(genai.RoleUser)
		if i%2 == 1 {
			author, role = "forecaster", genai.Role(genai.RoleModel)
		}
		out = append(out, compaction.Event{ID: fmt.Sprint("e", i), InvocationID: fmt.Sprintf("inv-%d", i/2), Author: author,
			Content: genai.NewContentFromText(text, role)})
	}
	return out
}

// asType is errors.As returning the target.
func asType[E error](err error) (E, bool) {
	var e E
	ok := errors.As(err, &e)
	return e, ok
}

// summaryRejection returns the reason of a rejected summarizer reply, "" if err is not one.
func summaryRejection(err error) string {
	if r, ok := asType[*compaction.SummaryRejectedError](err); ok {
		return r.Reason
	}
	return ""
}

// isSummarizerError reports whether err is the summarizer's own wrapper.
func isSummarizerError(err error) bool {
	_, ok := asType[*compaction.SummarizerError](err)
	return ok
}

// compactionEntries returns the fields of every "compaction" log entry.
func (w *wired) compactionEntries() []map[string]any {
	var out []map[string]any
	for _, e := range w.logs.FilterMessage("compaction").All() {
		out = append(out, e.ContextMap())
	}
	return out
}

const (
	outcomeCompacted   = "compacted"
	outcomeFailed      = "failed"
	outcomeNothingToDo = "nothing_to_do"
)

// assertNoText fails if any log entry's message or field contains one of the texts.
func assertNoText(t *testing.T, logs *observer.ObservedLogs, texts ...string) {
	t.Helper()
	for _, e := range logs.All() {
		line := e.Message + " " + fmt.Sprint(e.ContextMap())
		for _, s := range texts {
			if strings.Contains(line, s) {
				t.Errorf("log entry %q carries conversation text %q: %s", e.Message, s, line)
			}
		}
	}
}
