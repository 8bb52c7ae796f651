package corpus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ShellOptions configures Shell.
type ShellOptions struct {
	// Seed selects everything the sessions choose: modules, bugs, personas, commands. The same
	// seed on the same machine (same Go toolchain, same module cache) gives the same files.
	Seed int64
	// Sessions is the number of sessions to write. Default 6.
	Sessions int
	// Dir receives the trajectory files; it is created if missing. Required.
	Dir string
	// WorkDir holds the copies of the modules the commands run in. Default: a temporary
	// directory, removed when Shell returns.
	WorkDir string
	// Modules are the module paths to work on, found in the module cache (their highest
	// version there); modules that require other modules are skipped. Default DefaultModules().
	Modules []string
	// Go is the go command. Default "go" (from PATH).
	Go string
	// CommandTimeout bounds each command of a session. Default 60s, mini-swe-agent's.
	CommandTimeout time.Duration
	// Parallel is how many sessions run at once, each on a different module (sessions on one
	// module run one after the other in one directory, so that the go command reuses its build
	// cache). Default: the number of CPUs. The files do not depend on it.
	Parallel int
}

// ErrNoModule is returned when none of the modules is in the module cache.
var ErrNoModule = errors.New("corpus: none of the modules is in the module cache")

// Shell writes sessions of a shell-only coding agent, as mini-swe-agent trajectory files, and
// returns their paths in session order. See the package documentation.
func Shell(ctx context.Context, opts ShellOptions) ([]string, error) {
	if opts.Dir == "" {
		return nil, errors.New("corpus: ShellOptions.Dir is required")
	}
	if opts.Sessions <= 0 {
		opts.Sessions = 6
	}
	if len(opts.Modules) == 0 {
		opts.Modules = DefaultModules()
	}
	if opts.Go == "" {
		opts.Go = "go"
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = 60 * time.Second
	}
	ge, err := readGoEnv(ctx, opts.Go)
	if err != nil {
		return nil, err
	}
	var mods []cachedModule
	for _, p := range opts.Modules {
		m, ok := findCachedModule(ge.GOMODCACHE, p)
		if !ok {
			continue
		}
		gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
		if err != nil || hasRequirements(string(gomod)) {
			continue
		}
		mods = append(mods, m)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("%w: %s under %s", ErrNoModule, strings.Join(opts.Modules, ", "), ge.GOMODCACHE)
	}
	work := opts.WorkDir
	if work == "" {
		work, err = os.MkdirTemp("", "adkctx-corpus-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	if opts.Parallel <= 0 {
		opts.Parallel = runtime.NumCPU()
	}
	seedRNG := rand.New(rand.NewPCG(uint64(opts.Seed), 0x5e11))
	order := seedRNG.Perm(len(mods))
	firstPersona := seedRNG.IntN(len(personas))
	// Each module's sessions, in session order.
	byModule := make([][]int, len(mods))
	// The mutations each module's sessions tried, so that two sessions on a module differ and do
	// not try again what did not make a test fail.
	used := make([]map[string]bool, len(mods))
	for i := range opts.Sessions {
		m := order[i%len(mods)]
		byModule[m] = append(byModule[m], i)
	}
	files := make([]string, opts.Sessions)
	errs := make([]error, opts.Sessions)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for m, sessions := range byModule {
		if len(sessions) == 0 {
			continue
		}
		used[m] = map[string]bool{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, i := range sessions {
				if ctx.Err() != nil {
					return
				}
				format := FormatText
				if i%3 == 2 {
					format = FormatToolCall
				}
				p := personas[(firstPersona+i)%len(personas)]
				if format == FormatToolCall {
					p = personas[1] // the tool-call form is the newer harness, run with GPT-5-mini
				}
				rng := rand.New(rand.NewPCG(uint64(opts.Seed), uint64(i)+1))
				// The copy is the only entry of its parent, so that `ls -la` shows the same ".."
				// whatever else the work directory holds.
				dir := filepath.Join(work, escapeModulePath(mods[m].Path), "testbed")
				files[i], errs[i] = writeShellSession(ctx, ge, mods[m], dir, opts, rng, p, format, i, used[m])
				if errs[i] != nil {
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("corpus: shell session %d: %w", i, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return files, nil
}

func writeShellSession(ctx context.Context, ge goEnv, mod cachedModule, dir string, opts ShellOptions, rng *rand.Rand, p persona, format string, i int, used map[string]bool) (string, error) {
	traj, err := shellSession(ctx, ge, mod, dir, opts.CommandTimeout, rng, p, format, used)
	if err != nil {
		return "", fmt.Errorf("%s: %w", mod.Path, err)
	}
	b, err := traj.marshal()
	if err != nil {
		return "", err
	}
	name := filepath.Join(opts.Dir, fmt.Sprintf("%03d-%s.traj.json", i, traj.InstanceID))
	return name, os.WriteFile(name, b, 0o644)
}

// shellSession plays one session on a fresh copy of the module and returns its trajectory.
func shellSession(ctx context.Context, ge goEnv, mod cachedModule, dir string, timeout time.Duration, rng *rand.Rand, p persona, format string, used map[string]bool) (*trajectory, error) {
	sb, err := newSandbox(ctx, ge, mod.Dir, dir, timeout)
	if err != nil {
		return nil, err
	}
	idx, err := indexSource(sb.root)
	if err != nil {
		return nil, err
	}
	bug, fail, err := introduceBug(ctx, sb, idx, rng, 16, used)
	if err != nil {
		return nil, err
	}
	if err := sb.commit(ctx, mod.Path+" "+mod.Version); err != nil {
		return nil, err
	}
	a := &shellAgent{
		sb: sb, idx: idx, rng: rng, p: p, format: format, module: mod,
		bug: bug, fail: fail, focusDir: fail.pkgDir,
		ran: map[string]bool{}, mem: newMemory(), defSeen: map[string]bool{}, usesSeen: map[string]bool{}, listed: map[string]bool{},
		relNames: map[string]bool{}, relFiles: map[string]bool{},
	}
	a.target = a.between(p.minSteps, p.maxSteps)
	a.testFn = a.failingTestFn()
	a.task = a.taskText()
	a.mem.observe(idx, 0, a.task, a.focusDir)
	if err := a.play(ctx); err != nil {
		return nil, err
	}
	return a.trajectory(), nil
}

// taskText is the issue: the failing tests and an excerpt of their output, in the words of
// whoever reported it.
func (a *shellAgent) taskText() string {
	imp := a.module.Path
	if a.focusDir != "." {
		imp += "/" + a.focusDir
	}
	tests := a.fail.tests
	if len(tests) > 3 {
		tests = tests[:3]
	}
	var quoted []string
	for _, t := range tests {
		quoted = append(quoted, code(t))
	}
	var b strings.Builder
	switch a.rng.IntN(3) {
	case 0:
		fmt.Fprintf(&b, "%s fails in %s\n\n", strings.Join(quoted, ", "), code(imp))
	case 1:
		fmt.Fprintf(&b, "Regression: tests of %s fail on main\n\n", code(imp))
	default:
		fmt.Fprintf(&b, "go test ./... is red: %s\n\n", strings.Join(quoted, " and "))
	}
	fmt.Fprintf(&b, "Running the tests of %s on the current main branch fails:\n\n```\n$ go test %s\n%s```\n\n",
		code(imp), a.pkgArg(a.focusDir), failExcerpt(a.fail.output, 25))
	if t := a.failingTestFn(); t != nil {
		// What the reporter would name: exported functions of the package the test refers to,
		// the first step towards the bug first.
		var subjects []string
		add := func(f *funcInfo) {
			if f.file.dir == a.focusDir && f.recv == "" && f.name[0] >= 'A' && f.name[0] <= 'Z' &&
				len(subjects) < 2 && !slices.Contains(subjects, code(f.name)) {
				subjects = append(subjects, code(f.name))
			}
		}
		if c := a.chainTo(); len(c) > 0 {
			add(c[0])
		}
		for _, f := range a.idx.callees(t) {
			add(f)
		}
		if len(subjects) > 0 {
			fmt.Fprintf(&b, "%s exercises %s; the results it checks no longer match. ", code(t.name), strings.Join(subjects, " and "))
		}
	}
	b.WriteString(a.pick(
		"The tests themselves look right to me, so the bug should be in the package code.",
		"I have not changed the tests; the behaviour of the package must have changed.",
		"Expected: the package's tests pass. Please fix the code, not the tests.",
	))
	b.WriteString("\n")
	return b.String()
}

// failExcerpt is the part of a go test output an issue quotes: from the first failure, at most
// n lines of at most 200 characters.
func failExcerpt(out string, n int) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "--- FAIL") {
			start = i
			break
		}
	}
	lines = lines[start:]
	if len(lines) > n {
		tail := lines[len(lines)-2:]
		lines = append(lines[:n-3], "...")
		lines = append(lines, tail...)
	}
	var b strings.Builder
	for _, l := range lines {
		if utf8.RuneCountInString(l) > 200 {
			l = string([]rune(l)[:200]) + "..."
		}
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}

// Prices per million tokens, for the cost the trajectory reports.
var modelPrices = map[string][2]float64{
	"gemini/gemini-3-pro-preview": {2, 12},
	"openai/gpt-5-mini":           {0.25, 2},
}

// trajectory assembles the messages of the session in its format.
func (a *shellAgent) trajectory() *trajectory {
	owner, repo := path.Split(strings.TrimSuffix(a.module.Path, "/v2"))
	owner = path.Base(owner)
	t := &trajectory{
		TrajectoryFormat: a.format,
		InstanceID:       fmt.Sprintf("%s__%s-%d", owner, repo, 100+a.rng.IntN(900)),
	}
	clock := 1.760e9 + float64(a.rng.IntN(30_000_000))
	tick := func(lo, hi float64) float64 {
		clock += lo + a.rng.Float64()*(hi-lo)
		return math.Round(clock*1e6) / 1e6
	}
	system := shellSystemText
	if a.format == FormatToolCall {
		system = shellSystemToolCall
	}
	t.Messages = append(t.Messages,
		trajMessage{Role: "system", Content: system, Timestamp: tick(0, 0.01)},
		trajMessage{Role: "user", Content: instanceMessage(a.format, a.task), Timestamp: tick(0, 0.01)},
	)
	price := modelPrices[a.p.model]
	var cost float64
	promptChars := len(system) + len(t.Messages[1].Content)
	submission := ""
	for si, st := range a.steps {
		lastStep := si == len(a.steps)-1
		var reply trajMessage
		if a.format == FormatToolCall {
			reply = trajMessage{Role: "assistant", Content: st.thought, Timestamp: tick(2, 25)}
			for _, act := range st.actions {
				id := "call_" + randomToken(a.rng, 24)
				reply.ToolCalls = append(reply.ToolCalls, toolCall{ID: id, Type: "function",
					Function: toolFunction{Name: "bash", Arguments: argumentsJSON(map[string]string{"command": act.command})}})
			}
			reply.Extra = map[string]any{"actions": actionsExtra(st, reply.ToolCalls)}
		} else {
			reply = trajMessage{Role: "assistant", Content: "THOUGHT: " + st.thought + "\n\n```bash\n" + st.actions[0].command + "\n```", Timestamp: tick(2, 25)}
		}
		out := len(reply.Content)
		for _, c := range reply.ToolCalls {
			out += len(c.Function.Arguments)
		}
		cost += float64(promptChars)/4*price[0]/1e6 + float64(out)/4*price[1]/1e6
		promptChars += out
		t.Messages = append(t.Messages, reply)
		if lastStep && st.actions[0].kind == "submit" {
			lines := strings.SplitAfter(strings.TrimLeft(st.actions[0].output, " \t\r\n"), "\n")
			submission = strings.Join(lines[1:], "")
			break
		}
		for i, act := range st.actions {
			obs := renderObservation(act.output, act.code)
			promptChars += len(obs)
			if a.format == FormatToolCall {
				t.Messages = append(t.Messages, trajMessage{Role: "tool", Content: obs, ToolCallID: reply.ToolCalls[i].ID,
					Timestamp: tick(0.05, 3), Extra: map[string]any{"returncode": act.code}})
			} else {
				t.Messages = append(t.Messages, trajMessage{Role: "user", Content: obs, Timestamp: tick(0.05, 3)})
			}
		}
	}
	if a.format == FormatToolCall {
		t.Messages = append(t.Messages, trajMessage{Role: "exit", Content: submission, Timestamp: tick(0.05, 1),
			Extra: map[string]any{"exit_status": "Submitted", "submission": submission}})
		t.Info.MiniVersion = "2.4.6"
	} else {
		t.Messages = append(t.Messages, trajMessage{Role: "user", Content: submission, Timestamp: tick(0.05, 1)})
		t.Info.MiniVersion = "1.17.0"
	}
	t.Info.ExitStatus = "Submitted"
	t.Info.Submission = submission
	t.Info.ModelStats = modelStats{InstanceCost: math.Round(cost*1e6) / 1e6, APICalls: len(a.steps)}
	t.Info.Config = map[string]any{
		"agent":       map[string]any{"step_limit": 250, "cost_limit": 3.0},
		"model":       map[string]any{"model_name": a.p.model},
		"environment": map[string]any{"cwd": displayRoot, "timeout": 60, "environment_class": "docker"},
	}
	return t
}

func actionsExtra(st shellStep, calls []toolCall) []map[string]string {
	var out []map[string]string
	for i, act := range st.actions {
		out = append(out, map[string]string{"command": act.command, "tool_call_id": calls[i].ID})
	}
	return out
}

const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randomToken(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = tokenAlphabet[rng.IntN(len(tokenAlphabet))]
	}
	return string(b)
}
