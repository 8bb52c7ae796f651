package scenario

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// The cache model: a request's cached prefix is the longest one of the CacheDepth requests
// before it shares with it (the agent's and the summarizer's), with the same system instruction
// and tools; its contents none of them held are fresh.
func TestCacheModel(t *testing.T) {
	system := genai.NewContentFromText("You are a careful coding assistant.", genai.RoleUser)
	msg := func(i int) *genai.Content {
		return genai.NewContentFromText(fmt.Sprint("message number ", i), genai.RoleUser)
	}
	contents := func(ids ...int) []*genai.Content {
		var out []*genai.Content
		for _, i := range ids {
			out = append(out, msg(i))
		}
		return out
	}
	fixed := budget.EstimateRequest(nil, &genai.GenerateContentConfig{SystemInstruction: system})
	tokens := func(ids ...int) int { // of a request holding these contents
		n := fixed
		for _, c := range contents(ids...) {
			n += budget.EstimateContent(c)
		}
		return n
	}
	type req struct {
		ids   []int
		aside bool // a summarizer's
		other bool // another system instruction
	}
	type got struct{ Shared, Fresh int }
	tests := []struct {
		name string
		reqs []req
		want got // of the last request
	}{
		{"the first request: nothing cached", []req{{ids: []int{1, 2}}}, got{0, tokens(1, 2) - fixed}},
		{"extends the one before", []req{{ids: []int{1, 2}}, {ids: []int{1, 2, 3}}}, got{tokens(1, 2), tokens(3) - fixed}},
		{"after a trimmed request, an earlier one's prefix", []req{{ids: []int{1, 2, 3}}, {ids: []int{1, 3}}, {ids: []int{1, 2, 3, 4}}},
			got{tokens(1, 2, 3), tokens(4) - fixed}},
		{"a summarizer's prompt is cached too", []req{{ids: []int{1, 2}}, {ids: []int{1, 2, 9}, aside: true}, {ids: []int{1, 2, 9, 10}}},
			got{tokens(1, 2, 9), tokens(10) - fixed}},
		{"another system instruction: only fresh contents differ", []req{{ids: []int{1, 2}}, {ids: []int{1, 2, 3}, other: true}},
			got{0, tokens(3) - fixed}},
		{"a repeated content is fresh the second time", []req{{ids: []int{1}}, {ids: []int{1, 1}}}, got{tokens(1), tokens(1) - fixed}},
		{"older than CacheDepth requests: only the system instruction cached", append([]req{{ids: []int{1, 2}}}, func() []req {
			var out []req
			for i := range CacheDepth {
				out = append(out, req{ids: []int{100 + i}})
			}
			return append(out, req{ids: []int{1, 2, 3}})
		}()...), got{fixed, tokens(1, 2, 3) - fixed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f Figures
			var p sharedPrefix
			for _, r := range tc.reqs {
				s := system
				if r.other {
					s = genai.NewContentFromText("Another instruction.", genai.RoleUser)
				}
				p = f.prefix(s, nil, contents(r.ids...))
			}
			if diff := cmp.Diff(tc.want, got{p.shared, p.fresh}); diff != "" {
				t.Errorf("last request (-want +got):\n%s", diff)
			}
		})
	}
}

// Effective tokens bill the cached prefix at CacheReadPrice; an aside request is measured against
// the session's requests and leaves their figures as they are.
func TestEffectiveTokens(t *testing.T) {
	system := genai.NewContentFromText("You are a careful coding assistant.", genai.RoleUser)
	first := []*genai.Content{genai.NewContentFromText("[step 0] Look at internal/mod00/service.go.", genai.RoleUser)}
	second := append(first, genai.NewContentFromText("Decision D-0: fine.", genai.RoleModel))
	var r Recorder
	r.Add(system, nil, first, 1000)
	r.Aside(system, nil, append(second, genai.NewContentFromText("Summarize.", genai.RoleUser)), 1300)
	f := r.Figures()
	size := func(cs []*genai.Content) int {
		n := budget.EstimateRequest(nil, &genai.GenerateContentConfig{SystemInstruction: system})
		for _, c := range cs {
			n += budget.EstimateContent(c)
		}
		return n
	}
	reused := float64(scale(1300, size(first), size(append(second, genai.NewContentFromText("Summarize.", genai.RoleUser)))))
	fixed := size(nil)
	want := Figures{Requests: 1, Prompt: 1000, Effective: 1000, Fresh: scale(1000, size(first)-fixed, size(first)),
		AsideRequests: 1, AsidePrompt: 1300, AsideEffective: 1300 - reused + CacheReadPrice*reused}
	compared := []string{"Requests", "Prompt", "PrefixReused", "Effective", "Fresh", "AsideRequests", "AsidePrompt", "AsideEffective", "AsideTranscripts"}
	opts := cmp.Options{cmp.AllowUnexported(Figures{}), cmp.FilterPath(func(p cmp.Path) bool {
		f, ok := p.Last().(cmp.StructField)
		return ok && !slices.Contains(compared, f.Name())
	}, cmp.Ignore())}
	if diff := cmp.Diff(want, f, opts); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}
