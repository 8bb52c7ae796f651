package steps

import (
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
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
			req := &request.LLMRequest{Contents: tc.in}
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
