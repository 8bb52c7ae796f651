# adkctx — every check CI runs is behind `make test`; `make check` is the quick one.
#
# The repository holds six Go modules (docs/how-it-works.md, "Modules, and why"):
#   .        github.com/adkctx/adkctx          the core: no adk-go dependency
#   hooks    github.com/adkctx/adkctx/hooks    the glue for adk-go v1 (google.golang.org/adk)
#   adk2     github.com/adkctx/adkctx/adk2     the glue for adk-go v2 (google.golang.org/adk/v2)
#   example  github.com/adkctx/adkctx/example  the runnable v1 agent behind `make run`
#   cmd/adkctx github.com/adkctx/adkctx/cmd/adkctx  the `adkctx replay` command
#   internal/release  the release tooling: module proxy, consumer test, API files (not released)
# Every check runs in each module, from the module's own directory. The first four are released
# together at the version in VERSION (docs/RELEASING.md).
GO           ?= go
# Every go command builds with -trimpath: the build cache then keys this repository's packages by
# their content, not by the clone's directory, so a fresh clone reuses what an earlier one
# compiled (without it, CI's clean clone compiled every package of ours again, three ways).
override GOFLAGS := -trimpath $(filter-out -trimpath,$(GOFLAGS))
export GOFLAGS
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BIN          := $(CURDIR)/.bin
MODULES      := . hooks adk2 example cmd/adkctx internal/release
FUZZTIME     ?= 3000x
# Fuzzing workers per target (go test -parallel; empty: one per core). Each worker first runs the
# seed corpus, so make test, which runs the fuzzers beside everything else, uses one.
FUZZPARALLEL ?=
# How long a fuzzer minimizes an input it found (go test -fuzzminimizetime; empty: Go's 60 s). A
# new input that widens coverage is minimized before it is cached: make test, whose fuzzers run
# 500 inputs, caps that at 20 runs (a failing input is still written to testdata/fuzz).
FUZZMINIMIZE ?=
# Figures left out of a figures run (a go test -skip pattern; make test leaves out the cadence).
FIGURESKIP   ?=
# The v2 glue's figures: all of them (empty), or quick ($ADKCTX_FIGURES=quick): its rows at 32K
# only, no recall figure (make test; each row repeats one of the v1 glue's through adk-go v2's
# runner).
V2FIGURES    ?=
# The release tooling's commands, run from its module.
RELEASE      := $(GO) -C internal/release run

.PHONY: test check tidy generated api api-check apistats vet staticcheck unit quick consumer figures fuzz bench run run-adk2 screenshot generate

# The full check, CI's: the quick static checks, then staticcheck, the race suites, the figures
# and a short run of every fuzzer at once (each one's output printed whole when it ends). The
# unit step includes the consumer test (internal/release): the modules built into a module proxy
# at VERSION, then installed, built and run as a user does. The figures step leaves out the
# cadence sweep (docs/cost.md), which only `make figures` runs; each fuzzer runs 500 inputs on one
# worker.
# Measured on a 2-core machine: about 9 minutes from a clean clone, as .ci/run runs it, with the
# build cache of an earlier run (550 s; about 17 CPU-minutes: the figures 6, the race suites 7½,
# the fuzzers 2½); about 24 minutes when every package compiles again (1,432 s: a new Go or
# dependency version, or the first run with -trimpath).
test: tidy generated api-check vet
	@$(MAKE) --no-print-directory -j5 --output-sync=target figures unit-hooks fuzz $(filter-out unit-hooks,$(UNITS)) staticcheck \
	  FIGURESKIP='^TestFigureCadence$$' V2FIGURES=quick FUZZTIME=500x FUZZPARALLEL=1 FUZZMINIMIZE=20x

# The quick check, for the edit-test loop: tidy, the generated v2 glue, the API files, vet and
# every module's tests with -short, without -race, staticcheck, figures, fuzzers or the consumer
# test. About 2 minutes on the same machine with a warm build cache.
check: tidy generated api-check vet quick

# The adk-go v2 glue is generated from the v1 glue (internal/cmd/glue2): a stale copy fails CI.
generated:
	$(GO) run ./internal/cmd/glue2 -check

generate:
	$(GO) run ./internal/cmd/glue2

# The exported API of the released modules, one declaration per line in api/*.txt: make test fails
# on any difference; `make api` rewrites the files, committed with the change that made it.
api:
	$(RELEASE) ./cmd/api -w

api-check:
	$(RELEASE) ./cmd/api -check

# Exported identifiers per package and module (the v2 glue, generated, counted once), the
# functions over 80 lines, and the identifiers no Example uses and the README does not name.
apistats:
	@$(RELEASE) ./cmd/api -count -long 80 -users

# go.mod and go.sum must already be tidy: CI fails on any diff.
tidy:
	@set -e; for m in $(MODULES); do echo "tidy $$m"; (cd $$m && $(GO) mod tidy -diff); done

vet:
	@set -e; for m in $(MODULES); do echo "vet $$m"; (cd $$m && $(GO) vet ./...); done

# staticcheck is pinned and installed through the module proxy into .bin/.
$(BIN)/staticcheck:
	GOBIN=$(BIN) $(GO) install $(STATICCHECK)

staticcheck: $(BIN)/staticcheck
	@set -e; for m in $(MODULES); do echo "staticcheck $$m"; (cd $$m && $(BIN)/staticcheck ./...); done

# Every module's tests with -race, a target per module so that make -j runs them at once (vet
# runs in its own step). The race detector watches every package but SQLite's own engine
# (modernc.org/sqlite, C translated to Go, with its own locks): instrumenting it made the race
# suites a third slower and checked no code of ours, adk-go's, gorm's or the driver's.
RACE = $(GO) test -race -gcflags='modernc.org/...=-race=false' -shuffle=on -count=1 -vet=off -timeout 15m ./...
UNITS = unit-hooks unit-cmd unit-adk2 unit-core unit-example unit-release
.PHONY: $(UNITS)
unit: $(UNITS)
unit-core:
	$(RACE)
unit-hooks:
	cd hooks && $(RACE)
unit-adk2:
	cd adk2 && $(RACE)
unit-example:
	cd example && $(RACE)
unit-cmd:
	cd cmd/adkctx && $(RACE)
unit-release:
	cd internal/release && $(RACE)

quick:
	@set -e; for m in $(MODULES); do echo "test -short $$m"; \
	  (cd $$m && $(GO) test -short -count=1 -timeout 15m ./...); done

# The consumer test alone (make test runs it in unit): docs/RELEASING.md.
consumer:
	cd internal/release && $(GO) test -count=1 -run '^TestConsumer$$' -v .

# Tests that assert measured figures (token counts, not time), and the long runs of one session
# (TestLong...; both call hooks/internal/longrun.Test), all too slow under -race: the v1 glue's and
# the v2 glue's, each through its own adk-go runner, and the retention figure replaying the
# generated corpora of real agents' sessions (cmd/adkctx). A package whose tests call
# longrun.Test is named here (internal/release's TestLongRunsAreRunWithoutRace checks it).
# The three run at once (each is partly sequential), their logs printed one after the other.
FIGUREFLAGS = -count=1 -timeout 30m -run '^Test(Figure|Long)' $(if $(FIGURESKIP),-skip '$(FIGURESKIP)') -v
figures:
	@d=$$(mktemp -d); \
	(cd hooks && ADKCTX_FIGURES= $(GO) test $(FIGUREFLAGS) . ./dbartifact/ ./internal/reliability/ >$$d/v1 2>&1; echo $$? >$$d/v1.rc) & \
	(cd adk2 && ADKCTX_FIGURES=$(V2FIGURES) $(GO) test $(FIGUREFLAGS) ./hooks/ ./hooks/dbartifact/ >$$d/v2 2>&1; echo $$? >$$d/v2.rc) & \
	(cd cmd/adkctx && $(GO) test $(FIGUREFLAGS) . >$$d/replay 2>&1; echo $$? >$$d/replay.rc) & \
	wait; cat $$d/v1 $$d/v2 $$d/replay; \
	rc=$$(($$(cat $$d/v1.rc) + $$(cat $$d/v2.rc) + $$(cat $$d/replay.rc))); rm -rf $$d; exit $$rc

# A short run of every fuzz target, so CI exercises the fuzzers beyond their seed corpus. The
# budget is a count of executions, not a duration: with a duration, Go before 1.27 can fail a
# target with a bare "context deadline exceeded" when the time runs out (go.dev/issue/75804).
# Longer runs: make fuzz FUZZTIME=200000x (or a duration, accepting that race).
# The targets are found in the test sources (go test -list would build every package's tests).
# Each package's fuzzing test binary is built once (go test -c -fuzz) and run once per target,
# as go test -fuzz runs it (its worker processes, the fuzz cache in GOCACHE): go test -fuzz
# would link it again for every target, which cost most of the step.
fuzz:
	@set -e; bins=$$(mktemp -d); trap 'rm -rf $$bins' EXIT; cache=$$($(GO) env GOCACHE)/fuzz; \
	for m in $(MODULES); do (cd $$m && \
	  $(GO) list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do \
	    targets=$$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); \
	    [ -n "$$targets" ] || continue; \
	    bin=$$bins/$$(echo $$pkg | tr / _).test; \
	    $(GO) test -c -fuzz=. -o $$bin $$pkg; \
	    for f in $$targets; do \
	      echo "fuzz $$pkg $$f"; \
	      (cd $$dir && $$bin -test.paniconexit0 -test.timeout=10m -test.run='^$$' -test.fuzz="^$$f$$" \
	        -test.fuzztime=$(FUZZTIME) -test.fuzzcachedir=$$cache/$$pkg $(if $(FUZZPARALLEL),-test.parallel=$(FUZZPARALLEL)) \
	        $(if $(FUZZMINIMIZE),-test.fuzzminimizetime=$(FUZZMINIMIZE))); \
	    done; \
	  done); done

# BenchmarkScale (hooks/scale_bench_test.go) takes about 15 minutes: past go test's default
# 10-minute timeout. make bench BENCHFLAGS=-short runs its quick version (1k and 5k events).
bench:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(BENCHFLAGS) ./...); done

# make run RUNFLAGS='-metrics-addr 127.0.0.1:9464' also serves the metrics for Prometheus.
run:
	cd example && $(GO) run . -demo $(RUNFLAGS)

# The offline adk-go v2 example (make run stays the v1 demo).
run-adk2:
	cd adk2 && $(GO) run ./example

# The web UI screenshot in docs/ (installs Debian's chromium when missing; not part of test).
screenshot:
	scripts/screenshot.sh
