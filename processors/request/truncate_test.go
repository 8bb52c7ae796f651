package request

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/truncate"

	"github.com/adkctx/adkctx/internal/llmtest"
)

func trBigResp(id, name string, size int) *genai.Part {
	out := strings.Repeat("building step ...\n", size/18) + "FAIL: 3 tests failed\n"
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name,
		Response: map[string]any{"stdout": out, "exit_code": 1.0}}}
}

func TestTruncateFunctionResponses(t *testing.T) {
	cfg := truncate.Config{MaxBytes: 4096, MaxLines: 64}
	small := nzResp("c1", "ls", "a.txt")
	for _, tc := range []struct {
		name    string
		in      []*genai.Content
		wantCut int
	}{
		{name: "nil contents", in: nil},
		{name: "nil content and parts", in: []*genai.Content{nil, {Role: "user", Parts: []*genai.Part{nil}}}},
		{name: "small responses untouched", in: []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(small)}},
		{name: "nil Response map", in: []*genai.Content{nzUser(&genai.Part{FunctionResponse: &genai.FunctionResponse{Name: "x"}})}},
		{
			name: "big responses in history are cut, small ones kept",
			in: []*genai.Content{
				nzModel(nzCall("c1", "build"), nzCall("c2", "ls")),
				nzUser(trBigResp("c1", "build", 1<<20), small),
				nzModel(nzText("failed; retry")),
				nzModel(nzCall("c3", "build")),
				nzUser(nzText("result:"), trBigResp("c3", "build", 50000)),
			},
			wantCut: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &LLMRequest{Contents: tc.in}
			before := nzSnapshot(t, tc.in)
			st := TruncateFunctionResponses(req, cfg)
			if st.Responses != tc.wantCut {
				t.Fatalf("report = %+v, want %d responses cut", st, tc.wantCut)
			}
			if nzSnapshot(t, tc.in) != before {
				t.Fatalf("original contents were mutated")
			}
			if tc.wantCut == 0 {
				if len(tc.in) > 0 && &req.Contents[0] != &tc.in[0] {
					t.Errorf("req.Contents replaced although nothing was cut")
				}
				return
			}
			if len(req.Contents) != len(tc.in) {
				t.Fatalf("content count changed: %d -> %d", len(tc.in), len(req.Contents))
			}
			for i, c := range req.Contents {
				for j, p := range c.Parts {
					orig := tc.in[i].Parts[j]
					if p.FunctionResponse == nil {
						if p != orig {
							t.Errorf("content %d part %d: non-response part was copied", i, j)
						}
						continue
					}
					s, _ := p.FunctionResponse.Response["stdout"].(string)
					if len(s) > cfg.MaxBytes {
						t.Errorf("content %d part %d: %d bytes sent", i, j, len(s))
					}
					if strings.Contains(s, "building") && !strings.HasSuffix(s, "FAIL: 3 tests failed\n") {
						t.Errorf("content %d part %d: tail lost", i, j)
					}
					if p.FunctionResponse.ID != orig.FunctionResponse.ID || p.FunctionResponse.Name != orig.FunctionResponse.Name {
						t.Errorf("content %d part %d: id/name changed", i, j)
					}
				}
			}
			if req.Contents[2] != tc.in[2] {
				t.Errorf("unchanged content was copied")
			}
			// Idempotent.
			once := nzSnapshot(t, req.Contents)
			if st2 := TruncateFunctionResponses(req, cfg); st2.Responses > 0 || nzSnapshot(t, req.Contents) != once {
				t.Errorf("second pass changed something: %+v", st2)
			}
		})
	}
}

// TestTruncateFunctionResponsesWithADKRunner puts a 2 MB tool output into a real session (as if
// stored before truncation existed) and checks what adk-go's runner sends to the model when a
// BeforeModel callback runs TruncateFunctionResponses.
func TestTruncateFunctionResponsesWithADKRunner(t *testing.T) {
	ctx := context.Background()
	llm := &llmtest.Model{}
	var stats TruncateReport
	a, err := llmagent.New(llmagent.Config{
		Name: "assistant", Model: llm,
		BeforeModelCallbacks: []llmagent.BeforeModelCallback{
			func(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
				stats = TruncateFunctionResponses((*LLMRequest)(req), truncate.Config{})
				return nil, nil
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := session.InMemoryService()
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		author string
		c      *genai.Content
	}{
		{"user", nzUser(nzText("run the build"))},
		{"assistant", nzModel(nzCall("adk-1", "build"))},
		{"assistant", nzUser(trBigResp("adk-1", "build", 2<<20))},
		{"assistant", nzModel(nzText("The build failed."))},
	} {
		ev := session.NewEventWithContext(ctx, "inv-old")
		ev.Author, ev.Content = e.author, e.c
		if err := svc.AppendEvent(ctx, created.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: svc})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Run(ctx, "u", "s", nzUser(nzText("why?")), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(llm.Requests()) != 1 {
		t.Fatalf("%d model calls", len(llm.Requests()))
	}
	var sent string
	for _, c := range llm.Requests()[0].Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				sent, _ = p.FunctionResponse.Response["stdout"].(string)
			}
		}
	}
	if len(sent) == 0 || len(sent) > truncate.DefaultMaxBytes {
		t.Fatalf("sent %d bytes of tool output", len(sent))
	}
	if !strings.HasPrefix(sent, "building step ...\n") || !strings.HasSuffix(sent, "FAIL: 3 tests failed\n") ||
		!strings.Contains(sent, truncate.MarkerPrefix) {
		t.Errorf("sent output lacks head, tail or marker")
	}
	if diff := cmp.Diff(TruncateReport{Responses: 1}, TruncateReport{Responses: stats.Responses}); diff != "" {
		t.Errorf("stats mismatch:\n%s", diff)
	}
	// The stored event is untouched.
	got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ev := got.Session.Events().At(2)
	if s, _ := ev.Content.Parts[0].FunctionResponse.Response["stdout"].(string); len(s) < 2<<20-100 {
		t.Errorf("stored event was modified: %d bytes", len(s))
	}
}
