package replay

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/refs"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/processors/request"
)

// The ids every replay runs under: each run has its own session service, so they never meet.
const (
	appName   = "replay"
	userID    = "user"
	sessionID = "session"
	// ModelName is the replayed model's name; each configuration's window is given to it
	// through adkctx.Config.Models.
	ModelName = "replay-model"
	agentName = "agent"
)

// Summarizers the replay offers.
const (
	Extractive = "extractive"
	LLM        = "llm"
)

// Config is one adkctx configuration to replay with.
type Config struct {
	// Window is the model's context window in tokens.
	Window int
	// Summarizer is Extractive or LLM (the offline scripted summarizer).
	Summarizer string
	// Recall gives the agent adkctx's recall tools (and so measures whether one recall call
	// would reach what a request left out).
	Recall bool
	// Base is the adkctx configuration (from -config, or the zero value with compaction on):
	// Logger, the replayed model's entry in Models, Compaction.Synchronous and
	// Compaction.Summarizer are set by the replay.
	Base adkctx.Config
}

// Label names c in reports.
func (c Config) Label() string {
	r := "off"
	if c.Recall {
		r = "on"
	}
	return fmt.Sprintf("window %d, %s summarizer, recall %s", c.Window, c.Summarizer, r)
}

// adkctxConfig is the adkctx.Config of one run.
func (c Config) adkctxConfig(logger *zap.Logger) adkctx.Config {
	cfg := c.Base
	cfg.Logger = logger
	cfg.Models = slices.DeleteFunc(slices.Clone(c.Base.Models), func(m budget.ModelInfo) bool { return m.Name == ModelName })
	cfg.Models = append(cfg.Models, budget.ModelInfo{Name: ModelName, ContextWindow: c.Window})
	if c.Base.Compaction != nil {
		cc := *c.Base.Compaction
		cc.Synchronous = true
		switch c.Summarizer {
		case LLM:
			cc.Summarizer = &compaction.LLMSummarizer{Model: hooks.SummarizerModel(summarizer{})}
		default:
			cc.Summarizer = nil
		}
		cfg.Compaction = &cc
	}
	return cfg
}

// Replayer replays sessions under a set of configurations.
type Replayer struct {
	tokens  Tokens
	configs []Config
	limits  []budget.Limits
	// watch, when set, sees the contents of every request sent with adkctx (tests; called from
	// the runs' goroutines).
	watch func([]*genai.Content)
}

// New checks every configuration (as adkctx's hooks.New does) and returns a replayer.
func New(tokens Tokens, configs []Config) (*Replayer, error) {
	if _, err := newCounter(tokens); err != nil {
		return nil, err
	}
	r := &Replayer{tokens: tokens, configs: configs}
	for i, c := range configs {
		if c.Window <= 0 {
			return nil, fmt.Errorf("configuration %d: window %d: must be > 0", i+1, c.Window)
		}
		if c.Summarizer != Extractive && c.Summarizer != LLM {
			return nil, fmt.Errorf("configuration %d: summarizer %q: want %q or %q", i+1, c.Summarizer, Extractive, LLM)
		}
		h, err := hooks.New(c.adkctxConfig(zap.NewNop()))
		if err != nil {
			return nil, fmt.Errorf("configuration %d (%s): %w", i+1, c.Label(), err)
		}
		r.limits = append(r.limits, h.Limits(ModelName))
		if err := h.Close(context.Background()); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Limits returns the limits adkctx applies under configuration i.
func (r *Replayer) Limits(i int) budget.Limits { return r.limits[i] }

// Configs returns the configurations.
func (r *Replayer) Configs() []Config { return r.configs }

// Result is one session replayed: without adkctx, cut plainly, and with each configuration.
type Result struct {
	Session *trajectory.Session
	Plan    *refs.Plan
	// Baseline is the run without adkctx, one entry per step.
	Baseline []BaseStep
	// Runs holds one run per configuration, in order.
	Runs []Run
}

// BaseStep is one request of the run without adkctx.
type BaseStep struct {
	// Tokens is the request's prompt tokens; Contents its contents.
	Tokens, Contents int
	Score            refs.StepScore
	// Cuts holds, per configuration, the same request cut to that configuration's hard limit;
	// SameSize, cut to the size of the request adkctx sent at that step (nothing when adkctx sent
	// none): what the oldest-first cut keeps for adkctx's tokens.
	Cuts, SameSize []Cut
}

// Cut is a request without adkctx cut to a hard limit by dropping its oldest contents (and a
// function response left first without its call).
type Cut struct {
	Tokens, Dropped int
	Score           refs.StepScore
}

// Run is one replay with adkctx.
type Run struct {
	Steps []Step
	// Compactions holds adkctx's compactions, in order; Failures its failed attempts.
	Compactions []Compaction
	Failures    int
}

// Step is one step of a run with adkctx.
type Step struct {
	// Sent: the request went to the model; Refused: adkctx refused it (the rest of the turn was
	// then not replayed, Skipped).
	Sent, Refused, Skipped bool
	Tokens, Contents       int
	Score                  refs.StepScore
	// Action and ContentsDropped are the step's "budget decision" (action "none",
	// "compaction_needed", "trimmed" or "rejected").
	Action          string
	ContentsDropped int
	// FloorFits: the request's floor (system instruction and tools, summary, task and newest
	// step) fit under the hard limit with its margin (the budget decision's floor_tokens), so a
	// trim took history a compaction had left beside it.
	FloorFits bool
	// Reach holds, for each missed reference (Score.Missed, same order), the recall tool one
	// call of which would return it: "search_saved_outputs", "search_history", or "" when
	// neither would (or recall is off).
	Reach []string
}

// Compaction is one compaction adkctx logged.
type Compaction struct {
	// BeforeStep is the step whose request was the first after it (len(steps) when it came
	// after the last).
	BeforeStep int
	Trigger    string
	Summarizer string
	Fallback   bool
	// EventsCovered and the token counts are as logged.
	EventsCovered                   int
	OriginalTokens, CompactedTokens int
}

// Replay replays one session: with each configuration, then without adkctx (its requests cut
// to each configuration's hard limit and to the size of the request adkctx sent). The runs with
// adkctx are independent (each its own runner, services, counter and scorer; the session is
// only read), so they run side by side, at most GOMAXPROCS at once; each is deterministic.
func (r *Replayer) Replay(ctx context.Context, s *trajectory.Session) (*Result, error) {
	res := &Result{Session: s, Plan: refs.Analyze(s), Runs: make([]Run, len(r.configs))}
	steps := flatten(s)
	errs := make([]error, len(r.configs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range r.configs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			run, err := r.withAdkctx(ctx, s, res.Plan, steps, r.configs[i])
			if err != nil {
				errs[i] = fmt.Errorf("%s: replay with adkctx (%s): %w", s.ID, r.configs[i].Label(), err)
				return
			}
			res.Runs[i] = *run
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	base, err := r.baseline(ctx, s, res.Plan, steps, res.Runs)
	if err != nil {
		return nil, fmt.Errorf("%s: replay without adkctx: %w", s.ID, err)
	}
	res.Baseline = base
	return res, nil
}

func flatten(s *trajectory.Session) []*trajectory.Step {
	var out []*trajectory.Step
	for ti := range s.Turns {
		for si := range s.Turns[ti].Steps {
			out = append(out, &s.Turns[ti].Steps[si])
		}
	}
	return out
}

// harness is what one run needs: the runner, the scripted model, the session service.
type harness struct {
	runner    *runner.Runner
	model     *scripted
	artifacts *countingArtifacts
}

func newHarness(ctx context.Context, s *trajectory.Session, steps []*trajectory.Step, c *counter, extra []tool.Tool, wire func(runner.Config) (runner.Config, error)) (*harness, error) {
	m := &scripted{name: ModelName, steps: steps, count: c}
	system := s.System
	ag, err := llmagent.New(llmagent.Config{
		Name:  agentName,
		Model: m,
		// The recorded system instruction, as it is: an InstructionProvider is not templated.
		InstructionProvider: func(agent.ReadonlyContext) (string, error) { return system, nil },
		Tools:               append(toolsOf(s), extra...),
	})
	if err != nil {
		return nil, err
	}
	arts := &countingArtifacts{Service: artifact.InMemoryService()}
	rc := runner.Config{AppName: appName, Agent: ag, SessionService: session.InMemoryService(), ArtifactService: arts}
	if wire != nil {
		if rc, err = wire(rc); err != nil {
			return nil, err
		}
	}
	rn, err := runner.New(rc)
	if err != nil {
		return nil, err
	}
	if _, err := rc.SessionService.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err != nil {
		return nil, err
	}
	return &harness{runner: rn, model: m, artifacts: arts}, nil
}

// runTurns runs every turn; refused is called when adkctx refuses a request of turn t (the
// rest of that turn is not replayed); any other error ends the replay.
func (h *harness) runTurns(ctx context.Context, s *trajectory.Session, refused func(k int, err error)) error {
	start := 0
	for _, t := range s.Turns {
		end := start + len(t.Steps)
		h.model.turn(start, end)
		var msg *genai.Content
		if t.Origin != trajectory.None {
			msg = genai.NewContentFromText(t.User, genai.RoleUser)
		}
		for _, err := range h.runner.Run(ctx, userID, sessionID, msg, agent.RunConfig{}) {
			if err == nil {
				continue
			}
			var be *request.BudgetExceededError
			if errors.As(err, &be) {
				refused(h.model.next, err)
				break
			}
			return err
		}
		start = end
	}
	return nil
}

func (r *Replayer) baseline(ctx context.Context, s *trajectory.Session, plan *refs.Plan, steps []*trajectory.Step, runs []Run) ([]BaseStep, error) {
	c, err := newCounter(r.tokens)
	if err != nil {
		return nil, err
	}
	h, err := newHarness(ctx, s, steps, c, nil, nil)
	if err != nil {
		return nil, err
	}
	scorer := refs.NewScorer(plan)
	out := make([]BaseStep, len(steps))
	h.model.onRequest = func(k, tokens int, req *model.LLMRequest) {
		rq := refs.Request{Contents: req.Contents}
		if req.Config != nil {
			rq.System = refs.SystemText(req.Config.SystemInstruction)
		}
		bs := BaseStep{Tokens: tokens, Contents: len(req.Contents), Score: scorer.Score(k, rq)}
		fixed := c.fixed(req.Config)
		sizes := make([]int, len(req.Contents))
		for i, ct := range req.Contents {
			sizes[i] = c.content(ct)
		}
		cutTo := func(limit int) Cut {
			from, total := plainCut(req.Contents, sizes, fixed, tokens, limit)
			cut := Cut{Tokens: total, Dropped: from}
			if from == 0 {
				cut.Score = bs.Score
			} else {
				cut.Score = scorer.Score(k, refs.Request{System: rq.System, Contents: req.Contents[from:]})
			}
			return cut
		}
		for i := range r.configs {
			bs.Cuts = append(bs.Cuts, cutTo(r.limits[i].Hard))
			same := Cut{Score: refs.StepScore{Refs: bs.Score.Refs, Facts: bs.Score.Facts}} // adkctx sent nothing
			if a := runs[i].Steps[k]; a.Sent {
				// Larger than adkctx's when the newest content alone is: the cut keeps it whole.
				same = cutTo(a.Tokens)
			}
			bs.SameSize = append(bs.SameSize, same)
		}
		out[k] = bs
	}
	err = h.runTurns(ctx, s, func(k int, err error) {})
	return out, err
}

// plainCut drops the oldest contents until the request fits hard (keeping at least the newest),
// then a function response left first without its call. It returns the first content kept and
// the tokens of the cut request.
func plainCut(contents []*genai.Content, sizes []int, fixed, total, hard int) (int, int) {
	from := 0
	for total > hard && from < len(contents)-1 {
		total -= sizes[from]
		from++
	}
	for from > 0 && from < len(contents)-1 && responsesOnly(contents[from]) {
		total -= sizes[from]
		from++
	}
	return from, total
}

func responsesOnly(c *genai.Content) bool {
	if c == nil || len(c.Parts) == 0 {
		return false
	}
	for _, p := range c.Parts {
		if p == nil || p.FunctionResponse == nil {
			return false
		}
	}
	return true
}

func (r *Replayer) withAdkctx(ctx context.Context, s *trajectory.Session, plan *refs.Plan, steps []*trajectory.Step, cfg Config) (*Run, error) {
	c, err := newCounter(r.tokens)
	if err != nil {
		return nil, err
	}
	core, logs := observer.New(zap.DebugLevel)
	hk, err := hooks.New(cfg.adkctxConfig(zap.New(core)))
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			hk.Close(context.WithoutCancel(ctx)) // a failed run: its error is the one reported
		}
	}()
	var extra []tool.Tool
	if cfg.Recall {
		if extra, err = hk.RecallTools(); err != nil {
			return nil, err
		}
	}
	h, err := newHarness(ctx, s, steps, c, extra, hk.Wire)
	if err != nil {
		return nil, err
	}
	run := &Run{Steps: make([]Step, len(steps))}
	for i := range run.Steps {
		run.Steps[i].Skipped = true
	}
	scorer := refs.NewScorer(plan)
	var reach *reacher
	if cfg.Recall {
		if reach, err = newReacher(h.artifacts); err != nil {
			return nil, err
		}
	}
	// drain reads adkctx's log entries since the last call: compactions are placed before step
	// k; the newest budget decision is step k's.
	drain := func(k int) (action string, dropped int, floorFits bool) {
		for _, e := range logs.TakeAll() {
			f := e.ContextMap()
			switch e.Message {
			case "budget decision":
				action, _ = f["action"].(string)
				dropped = intField(f["contents_dropped"])
				floorFits = intField(f["floor_tokens"])+intField(f["safety_margin"]) <= intField(f["hard_limit"])
			case "compaction":
				switch f["outcome"] {
				case "compacted":
					fb, _ := f["fallback_used"].(bool)
					trig, _ := f["trigger"].(string)
					sum, _ := f["summarizer"].(string)
					run.Compactions = append(run.Compactions, Compaction{
						BeforeStep: k, Trigger: trig, Summarizer: sum, Fallback: fb,
						EventsCovered: intField(f["events_covered"]), OriginalTokens: intField(f["original_tokens"]), CompactedTokens: intField(f["compacted_tokens"]),
					})
				case "failed":
					run.Failures++
				}
			}
		}
		return action, dropped, floorFits
	}
	h.model.onRequest = func(k, tokens int, req *model.LLMRequest) {
		if r.watch != nil {
			r.watch(req.Contents)
		}
		rq := refs.Request{Contents: req.Contents}
		if req.Config != nil {
			rq.System = refs.SystemText(req.Config.SystemInstruction)
		}
		st := Step{Sent: true, Tokens: tokens, Contents: len(req.Contents), Score: scorer.Score(k, rq)}
		st.Action, st.ContentsDropped, st.FloorFits = drain(k)
		if reach != nil {
			st.Reach = reach.check(ctx, st.Score.Missed)
		} else if len(st.Score.Missed) > 0 {
			st.Reach = make([]string, len(st.Score.Missed))
		}
		run.Steps[k] = st
	}
	err = h.runTurns(ctx, s, func(k int, _ error) {
		action, dropped, _ := drain(k)
		sp := plan.Steps[k]
		run.Steps[k] = Step{Refused: true, Action: action, ContentsDropped: dropped,
			Score: refs.StepScore{Refs: len(sp.Refs), Facts: sp.FactsDue, Missed: sp.Refs}, Reach: make([]string, len(sp.Refs))}
	})
	if err != nil {
		return nil, err
	}
	drain(len(steps))
	for i := range run.Steps {
		if st := &run.Steps[i]; st.Skipped {
			// Not replayed (after a refusal in its turn): nothing sent, nothing kept.
			sp := plan.Steps[i]
			st.Score = refs.StepScore{Refs: len(sp.Refs), Facts: sp.FactsDue, Missed: sp.Refs}
			st.Reach = make([]string, len(sp.Refs))
		}
	}
	closed = true
	if err := hk.Close(ctx); err != nil {
		return nil, err // a wiring mistake adkctx found: the run's figures cannot be trusted
	}
	return run, nil
}

func intField(v any) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case int:
		return x
	case uint64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}
