package steps

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/processors/response"
)

func TestUsageOf(t *testing.T) {
	md := &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:        1200,
		CandidatesTokenCount:    80,
		CachedContentTokenCount: 1000,
		ThoughtsTokenCount:      40,
		TotalTokenCount:         1320,
	}
	for _, tc := range []struct {
		name   string
		resp   *response.LLMResponse
		want   budget.Usage
		wantOK bool
	}{
		{name: "nil", resp: nil},
		{name: "no usage", resp: &response.LLMResponse{}},
		{name: "partial chunk", resp: &response.LLMResponse{Partial: true, UsageMetadata: md}},
		{
			name:   "final response",
			resp:   &response.LLMResponse{UsageMetadata: md},
			want:   budget.UsageFrom(md),
			wantOK: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := UsageOf(tc.resp)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("usage mismatch (-want +got):\n%s", diff)
			}
			if ok && (got.Prompt != 1200 || got.Output != 80 || got.Cached != 1000 || got.Thought != 40 || got.Total != 1320) {
				t.Errorf("usage fields not carried over: %+v", got)
			}
		})
	}
}
