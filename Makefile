# adkctx — every check CI runs is behind `make test`.
GO           ?= go
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BIN          := $(CURDIR)/.bin
PKGS         := ./...

.PHONY: test tidy vet staticcheck unit figures fuzz bench run screenshot

test: tidy vet staticcheck unit figures fuzz test-adk2

# go.mod and go.sum must already be tidy: CI fails on any diff.
tidy:
	$(GO) mod tidy -diff

vet:
	$(GO) vet $(PKGS)

# staticcheck is pinned and installed through the module proxy into .bin/.
$(BIN)/staticcheck:
	GOBIN=$(BIN) $(GO) install $(STATICCHECK)

staticcheck: $(BIN)/staticcheck
	$(BIN)/staticcheck $(PKGS)

unit:
	$(GO) test -race -shuffle=on -count=1 -timeout 15m $(PKGS)

# Tests that assert measured figures (token counts, not time) and are too slow under -race.
figures:
	$(GO) test -count=1 -run '^TestFigure' -v ./hooks/

# A short run of every fuzz target, so CI exercises the fuzzers beyond their seed corpus.
FUZZTIME ?= 5s
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# make run RUNFLAGS='-metrics-addr 127.0.0.1:9464' also serves the metrics for Prometheus.
run:
	$(GO) run ./example -demo $(RUNFLAGS)

# The web UI screenshot in docs/ (installs Debian's chromium when missing; not part of test).
screenshot:
	scripts/screenshot.sh

# --- adk-go v2: the nested module adk2/ (github.com/adkctx/adkctx/adk2) ----------------------
# Its own checks, from its own directory; the adk-go v1 writer of its upgrade test is a module of
# its own too. The v2 glue parses nothing, so it has no fuzzers; the loop runs any it gains.
ADK2     := $(CURDIR)/adk2
V1WRITER := $(ADK2)/hooks/testdata/v1writer

.PHONY: test-adk2 run-adk2

test-adk2: $(BIN)/staticcheck
	cd $(ADK2) && $(GO) mod tidy -diff
	cd $(V1WRITER) && GOWORK=off $(GO) mod tidy -diff
	cd $(ADK2) && $(GO) vet ./...
	cd $(ADK2) && $(BIN)/staticcheck ./...
	cd $(ADK2) && $(GO) test -race -shuffle=on -count=1 -timeout 15m ./...
	cd $(ADK2) && $(GO) test -count=1 -run '^TestFigure' -v ./hooks/
	@set -e; cd $(ADK2); for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# The offline v2 example (make run stays the v1 demo).
run-adk2:
	cd $(ADK2) && $(GO) run ./example
# --- end adk2 ---------------------------------------------------------------------------------
