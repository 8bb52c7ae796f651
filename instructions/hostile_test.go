//go:build unix

package instructions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/instructions/internal/discover"
)

// hangGuard is how long TestLoaderFIFOSwap waits for Loads that should take
// milliseconds before it declares one blocked: a liveness guard, not a
// timing assertion.
const hangGuard = 30 * time.Second

// TestLoaderFIFOSwap: sessions keep loading the instructions of a directory
// whose AGENTS.md is swapped with a FIFO again and again. No Load may hang
// (a discovery blocked on the FIFO used to hold the directory's lock, and
// every later turn of every session with it).
func TestLoaderFIFOSwap(t *testing.T) {
	root := tempRepo(t)
	sub := filepath.Join(root, "sub")
	write(t, filepath.Join(root, "AGENTS.md"), "root\n"+strings.Repeat("@sub/AGENTS.md\n", 40))
	write(t, filepath.Join(sub, "AGENTS.md"), "regular\n")
	fifo := filepath.Join(sub, "AGENTS.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	swapped := make(chan error, 1)
	go func() {
		name, spare := filepath.Join(sub, "AGENTS.md"), filepath.Join(sub, "AGENTS.md.real")
		for {
			select {
			case <-stop:
				swapped <- nil
				return
			default:
			}
			for _, mv := range [][2]string{{name, spare}, {fifo, name}, {name, fifo}, {spare, name}} {
				if err := os.Rename(mv[0], mv[1]); err != nil {
					swapped <- err
					return
				}
				runtime.Gosched()
			}
		}
	}()

	// Each session takes turns until the Loader has re-read the directory
	// often enough (most turns see a swap and re-read it).
	const sessions, discoveries, maxTurns = 4, 1200, 20000
	var wg sync.WaitGroup
	var failed, metFIFO atomic.Int64 // metFIFO: Loads whose discovery refused the FIFO
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < maxTurns && l.discoveries.Load() < discoveries; i++ {
				m, err := l.Load(t.Context(), sub)
				if err != nil {
					failed.Add(1)
				}
				if slices.ContainsFunc(m.Skipped, func(sk agentsmd.Skip) bool { return strings.Contains(sk.Reason, "not a regular file") }) {
					metFIFO.Add(1)
				}
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
		close(stop)
	case <-time.After(hangGuard):
		close(stop)
		released := 0
		for done := false; !done; {
			select {
			case <-finished:
				done = true
			default:
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
					released++
				}
				time.Sleep(time.Millisecond)
			}
		}
		t.Fatalf("Loads hung on a FIFO swapped in for AGENTS.md (released %d by opening the FIFO for writing)", released)
	}
	if err := <-swapped; err != nil {
		t.Fatalf("swapper: %v", err)
	}
	if n := failed.Load(); n > 0 {
		t.Errorf("%d Loads failed", n)
	}
	t.Logf("%d discoveries, %d Loads met the FIFO", l.discoveries.Load(), metFIFO.Load())
	if metFIFO.Load() == 0 {
		t.Error("no Load met the FIFO: the race this test is about did not happen")
	}
	m := mustLoad(t, l, sub)
	if !strings.Contains(m.Text, "regular") {
		t.Errorf("after the swaps: text lacks the file:\n%s", m.Text)
	}
}

// doneWatcher is a context that reports when somebody starts waiting on it.
type doneWatcher struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func (c *doneWatcher) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

// TestLoaderSlowDiscovery: while the discovery of one directory hangs, other
// directories load, Loads of the same directory share the one discovery,
// and a waiter gives up when its context is done.
func TestLoaderSlowDiscovery(t *testing.T) {
	root := tempRepo(t)
	slow, other := filepath.Join(root, "slow"), filepath.Join(root, "other")
	write(t, filepath.Join(slow, "AGENTS.md"), "slow rules\n")
	write(t, filepath.Join(other, "AGENTS.md"), "other rules\n")
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	var slowCalls atomic.Int64
	l.discover = func(dir string, cfg agentsmd.Config) (*discover.Discovery, error) {
		if dir == slow {
			if slowCalls.Add(1) == 1 {
				close(started)
			}
			<-release // a hung file system
		}
		return discover.Discover(dir, cfg)
	}

	type result struct {
		m   Merged
		err error
	}
	load := func(ctx context.Context) chan result {
		ch := make(chan result, 1)
		go func() {
			m, err := l.Load(ctx, slow)
			ch <- result{m, err}
		}()
		return ch
	}
	first := load(context.Background())
	<-started

	// Other directories are not held up.
	if m := mustLoad(t, l, other); !strings.Contains(m.Text, "other rules") {
		t.Errorf("other directory: %q", m.Text)
	}
	// A waiter gives up when its context is done.
	ctx, cancel := context.WithCancel(context.Background())
	watched := &doneWatcher{Context: ctx, waiting: make(chan struct{})}
	gaveUp := load(watched)
	<-watched.waiting
	cancel()
	if r := <-gaveUp; !errors.Is(r.err, context.Canceled) {
		t.Errorf("canceled waiter: err = %v, want context.Canceled", r.err)
	}
	// An already canceled context does not wait at all.
	if _, err := l.Load(ctx, slow); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: err = %v", err)
	}
	// A second Load waits for the discovery under way instead of starting its own.
	joined := &doneWatcher{Context: context.Background(), waiting: make(chan struct{})}
	second := load(joined)
	<-joined.waiting

	close(release)
	for i, ch := range []chan result{first, second} {
		r := <-ch
		if r.err != nil || !strings.Contains(r.m.Text, "slow rules") {
			t.Errorf("waiter %d: %q, %v", i, r.m.Text, r.err)
		}
	}
	if n := slowCalls.Load(); n != 1 {
		t.Errorf("discoveries of the slow directory = %d, want 1 (shared)", n)
	}
	mustLoad(t, l, slow)
	if got := l.discoveries.Load(); got != 2 {
		t.Errorf("discoveries = %d, want 2 (slow once, other once; then cache hits)", got)
	}
}

func TestLoaderForgetDuringDiscovery(t *testing.T) {
	root := tempRepo(t)
	write(t, filepath.Join(root, "AGENTS.md"), "rules\n")
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	l.discover = func(dir string, cfg agentsmd.Config) (*discover.Discovery, error) {
		close(started)
		<-release
		return discover.Discover(dir, cfg)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Load(t.Context(), root)
		done <- err
	}()
	<-started
	l.forget(root)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l.cachedDirs() != 0 {
		t.Errorf("cached dirs = %d: a forgotten directory was cached by the discovery in progress", l.cachedDirs())
	}
}

func TestLoaderDiscoveryPanicIsAnError(t *testing.T) {
	root := tempRepo(t)
	write(t, filepath.Join(root, "AGENTS.md"), "rules\n")
	core, logs := observer.New(zapcore.ErrorLevel)
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	l.discover = func(string, agentsmd.Config) (*discover.Discovery, error) { panic("bug: secret-in-file") }
	if _, err := l.Load(t.Context(), root); err == nil || !strings.Contains(err.Error(), "panicked (string)") || strings.Contains(err.Error(), "secret") {
		t.Errorf("err = %v", err)
	}
	if logs.Len() != 1 || strings.Contains(fmt.Sprint(logs.All()[0].ContextMap()), "secret") {
		t.Errorf("error logs = %v, want 1 without the panic's value", logs.All())
	}
	l.discover = discover.Discover
	if m := mustLoad(t, l, root); !strings.Contains(m.Text, "rules") {
		t.Errorf("after the panic: %q", m.Text)
	}
}

// TestLoaderTextBudget: the Loader passes its MaxBytes to the discovery as
// the text budget, so imports the merged text could not hold are not read.
// The merged text keeps the same heads as with everything read; only the
// sizes the cut markers quote are smaller, which leaves room for a few more
// bytes.
func TestLoaderTextBudget(t *testing.T) {
	root := tempRepo(t)
	var top strings.Builder
	top.WriteString("# Rules\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&top, "@imp/f%02d.md\n", i)
		write(t, filepath.Join(root, "imp", fmt.Sprintf("f%02d.md", i)), strings.Repeat(fmt.Sprintf("rule %02d\n", i), 256))
	}
	write(t, filepath.Join(root, "AGENTS.md"), top.String())
	leaf := filepath.Join(root, "svc")
	write(t, filepath.Join(leaf, "AGENTS.md"), "service rules\n")

	ic := Config{MaxBytes: 4096}
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, ic, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := mustLoad(t, l, leaf)
	budget, err := discover.Discover(leaf, agentsmd.Config{NoGlobal: true, TextBudget: int64(ic.MaxBytes)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(merge(budget, ic).Text, got.Text); diff != "" {
		t.Errorf("Loader text differs from a discovery with TextBudget = MaxBytes (-want +got):\n%s", diff)
	}
	all, err := discover.Discover(leaf, agentsmd.Config{NoGlobal: true, TextBudget: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	want := merge(all, ic)
	if len(got.Sources) != len(want.Sources) {
		t.Fatalf("sources: %d with the budget, %d with everything read", len(got.Sources), len(want.Sources))
	}
	for i, s := range got.Sources {
		kept, keptAll := s.KeptBytes, want.Sources[i].KeptBytes
		if kept < keptAll || kept > keptAll+8 {
			t.Errorf("%s: kept %d bytes, %d with everything read", s.Path, kept, keptAll)
			continue
		}
		head := strings.TrimRight(budget.Files[i].Content, " \t\r\n")[:kept]
		if headAll := strings.TrimRight(all.Files[i].Content, " \t\r\n")[:kept]; head != headAll {
			t.Errorf("%s: the kept head differs from the one with everything read", s.Path)
		}
	}
	if budget.Stats.BytesRead*10 > all.Stats.BytesRead {
		t.Errorf("read %d bytes with the budget, %d without: want far fewer", budget.Stats.BytesRead, all.Stats.BytesRead)
	}
	var skipped []string
	for _, s := range got.Skipped {
		skipped = append(skipped, s.Reason)
	}
	// The leaf used 13 bytes; the root file reached the rest of the
	// 4096-byte budget with its second import (2048 bytes each).
	if diff := cmp.Diff([]string{"48 import(s) not read: the text already fills the text budget of 4096 bytes"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}
