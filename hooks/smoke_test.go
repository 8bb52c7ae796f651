package hooks_test

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/internal/llmtest"
)

func TestSmokeContinuity(t *testing.T) {
	m := &llmtest.Model{UsageScale: 1}
	core, logs := observer.New(zapcore.DebugLevel)
	h, err := hooks.New(hooks.Config{Logger: zap.New(core), Compaction: &compaction.Config{Interval: 3, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "be careful"})
	rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := runner.New(rc)
	s := &stack{hooks: h, model: m, runner: r, sessions: rc.SessionService, logs: logs}
	for i := range 12 {
		if err := s.send(t, "s1", fmt.Sprintf("turn-%d: never touch vendor/ %d", i, i)); err != nil {
			t.Fatal(err)
		}
	}
	for i, req := range m.Requests() {
		var lines []string
		for _, c := range req.Contents {
			lines = append(lines, c.Role+":"+strings.ReplaceAll(llmtest.AllText(&model.LLMRequest{Contents: []*genai.Content{c}}), "\n", " | "))
		}
		t.Logf("request %d:\n  %s", i, strings.Join(lines, "\n  "))
	}
	for _, e := range logs.FilterMessage("compaction").All() {
		t.Logf("%v", e.ContextMap())
	}
}
