package hooks

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/adk/artifact"
	"google.golang.org/adk/tool"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/hooks/internal/recalltools"
	"github.com/adkctx/adkctx/recall"
)

// RecallTools returns the recall tools: read a saved tool output by line
// or byte range, search saved outputs, search the turns that summaries cover, read one such
// turn. Give them to the agent and wire the runner with an artifact service:
//
//	tools, err := h.RecallTools()
//	agent, err := llmagent.New(llmagent.Config{..., Tools: append(myTools, tools...)})
//	rc, err := h.Wire(runner.Config{..., Agent: agent, ArtifactService: artifacts})
//
// The tools read through the artifact service Wire captures (the one truncated outputs are
// saved to; hooks/dbartifact keeps them in the sessions' database), only the calling session's
// data, each call bounded below the truncation limits. Asking for them turns on what they need:
// a request that declares them gets notes that name them (the truncation note names the tool and
// the output, an excerpt's note the saved result, the summary says earlier turns can be
// searched; a request without them keeps today's bytes), and each compaction saves whole the
// tool results its view shows as excerpts and the turns it covers as a history segment (failures
// are logged, never fail the compaction). The list is static: the same four declarations on
// every request.
//
// Once they are given out, Wire refuses a runner.Config without an artifact service when no
// earlier Wire captured one (*adkctx.WiringError, recall_without_artifacts); a model call whose
// request declares them while there is none (the runner wired by hand) reports the same problem
// through Check, and each call of the tools returns an error the model reads.
func (h *Hooks) RecallTools() ([]tool.Tool, error) {
	h.recall.mu.Lock()
	defer h.recall.mu.Unlock()
	if h.recall.tools == nil {
		tools, err := recalltools.New(recalltools.Config{Engine: h.e, Artifacts: h.recall.service})
		if err != nil {
			return nil, err
		}
		h.recall.tools = tools
		h.e.UseRecall(func(s glue.Key) recall.Store {
			if svc := h.recall.service(); svc != nil {
				return recalltools.SessionStore(svc, s.App, s.User, s.ID)
			}
			return nil
		})
	}
	return append([]tool.Tool(nil), h.recall.tools...), nil
}

// recallWiring is what the recall tools need of the hooks: the artifact service Wire captured.
type recallWiring struct {
	mu    sync.Mutex
	tools []tool.Tool

	svcMu sync.Mutex
	svc   artifact.Service
}

// service returns the artifact service captured at Wire (nil: none yet).
func (r *recallWiring) service() artifact.Service {
	r.svcMu.Lock()
	defer r.svcMu.Unlock()
	return r.svc
}

// inUse reports whether RecallTools gave the tools out.
func (r *recallWiring) inUse() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tools != nil
}

// readier is an artifact service that can say whether it is ready to serve
// (the one dbartifact.NewService returns: its tables exist).
type readier interface {
	Ready(ctx context.Context) error
}

// check returns why Wire must refuse the runner's artifact service svc (nil: none): it says it
// cannot serve, or there is none while the recall tools need one.
func (r *recallWiring) check(ctx context.Context, svc artifact.Service) error {
	if rd, ok := svc.(readier); ok {
		if err := rd.Ready(ctx); err != nil {
			return &adkctx.WiringError{Problem: "artifact_service_not_ready",
				Message: fmt.Sprintf("the runner's artifact service (%T) cannot serve: %v", svc, err), Err: err}
		}
	}
	if svc == nil && r.service() == nil && r.inUse() {
		return glue.RecallWithoutArtifacts()
	}
	return nil
}

// capture records the runner's artifact service. One Hooks reads one: a second, different
// service is refused (the tools would not find what the other runner saved).
func (r *recallWiring) capture(svc artifact.Service) error {
	if svc == nil {
		return nil
	}
	r.svcMu.Lock()
	defer r.svcMu.Unlock()
	if r.svc != nil && !sameArtifacts(r.svc, svc) {
		return &adkctx.WiringError{Problem: "second_artifact_service", Message: fmt.Sprintf("this Hooks was wired with another "+
			"artifact service (%T): wire every runner with the same one, or make another Hooks", r.svc)}
	}
	r.svc = svc
	return nil
}

// sameArtifacts reports whether a and b are the same artifact service (false when the type
// cannot be compared).
func sameArtifacts(a, b artifact.Service) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
