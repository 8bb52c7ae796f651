package report

import (
	"github.com/adkctx/adkctx/cmd/adkctx/internal/refs"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
)

// Figures are one session's (or the total's) figures under one configuration. The JSON names
// are stable; every count covers all recorded steps (a step adkctx refused, or did not replay
// after a refusal, keeps nothing and sends no tokens; a plain cut larger than the window, which
// the model's provider would refuse, keeps nothing).
type Figures struct {
	Sessions int `json:"sessions"`
	Steps    int `json:"steps"`
	// Prompt tokens summed over every request: without adkctx, the same requests cut plainly to
	// adkctx's hard limit, and with adkctx.
	TokensNoAdkctx int64 `json:"prompt_tokens_no_adkctx"`
	TokensPlainCut int64 `json:"prompt_tokens_plain_cut"`
	TokensAdkctx   int64 `json:"prompt_tokens_adkctx"`
	// The largest request of each.
	LargestNoAdkctx int `json:"largest_request_no_adkctx"`
	LargestPlainCut int `json:"largest_request_plain_cut"`
	LargestAdkctx   int `json:"largest_request_adkctx"`
	// Requests larger than the window: without adkctx, and cut plainly (the oldest contents
	// dropped could not bring the instruction, the tools and the newest content under it).
	OverWindowNoAdkctx int `json:"requests_over_window_no_adkctx"`
	OverWindowPlainCut int `json:"requests_over_window_plain_cut"`
	// References of every step, and those each request kept.
	References             int `json:"references"`
	ReferencesKeptPlainCut int `json:"references_kept_plain_cut"`
	ReferencesKeptAdkctx   int `json:"references_kept_adkctx"`
	// References and user facts kept by the requests without adkctx cut oldest first to the size
	// of the request adkctx sent at each step (nothing where adkctx sent none, or where the cut is
	// still larger than the window): what adkctx's choice keeps against the cut's for the same
	// tokens.
	ReferencesKeptSameSizeCut int `json:"references_kept_same_size_cut"`
	UserFactsKeptSameSizeCut  int `json:"user_facts_kept_same_size_cut"`
	// Of the references adkctx did not keep: how many one recall call would return, by tool.
	MissedOneRecallAway int `json:"missed_one_recall_away"`
	MissedReachOutputs  int `json:"missed_reach_search_saved_outputs"`
	MissedReachHistory  int `json:"missed_reach_search_history"`
	// User facts due in every request, and those kept.
	UserFacts             int `json:"user_facts"`
	UserFactsKeptPlainCut int `json:"user_facts_kept_plain_cut"`
	UserFactsKeptAdkctx   int `json:"user_facts_kept_adkctx"`
	// Requests holding the task's head.
	TaskHeadPlainCut int `json:"task_head_present_plain_cut"`
	TaskHeadAdkctx   int `json:"task_head_present_adkctx"`
	// What adkctx did (from its logs).
	Compactions         int `json:"compactions"`
	CompactionFallbacks int `json:"compaction_fallbacks"`
	CompactionFailures  int `json:"compaction_failures"`
	RequestsTrimmed     int `json:"requests_trimmed"`
	// RequestsTrimmedFloorFit counts the trimmed requests whose floor (instruction, tools,
	// summary, task, newest step) fit under the hard limit: trims a compaction should have
	// spared.
	RequestsTrimmedFloorFit int `json:"requests_trimmed_floor_fit"`
	ContentsDropped         int `json:"contents_dropped"`
	RequestsRefused         int `json:"requests_refused"`
	StepsNotReplayed        int `json:"steps_not_replayed"`
}

// Compute returns a replayed session's figures under each configuration, in order.
func Compute(res *replay.Result, rp *replay.Replayer) []Figures {
	out := make([]Figures, len(res.Runs))
	for i, run := range res.Runs {
		f := &out[i]
		f.Sessions = 1
		f.Steps = len(res.Baseline)
		window := rp.Configs()[i].Window
		for k, b := range res.Baseline {
			cut := b.Cuts[i]
			a := run.Steps[k]
			f.TokensNoAdkctx += int64(b.Tokens)
			f.TokensPlainCut += int64(cut.Tokens)
			f.TokensAdkctx += int64(a.Tokens)
			f.LargestNoAdkctx = max(f.LargestNoAdkctx, b.Tokens)
			f.LargestPlainCut = max(f.LargestPlainCut, cut.Tokens)
			f.LargestAdkctx = max(f.LargestAdkctx, a.Tokens)
			if b.Tokens > window {
				f.OverWindowNoAdkctx++
			}
			if cut.Tokens > window {
				// The provider refuses it: it keeps nothing, as a request adkctx refused.
				f.OverWindowPlainCut++
				cut.Score = refs.StepScore{Refs: cut.Score.Refs, Facts: cut.Score.Facts}
			}
			f.References += b.Score.Refs
			f.ReferencesKeptPlainCut += cut.Score.RefsKept
			if same := b.SameSize[i]; same.Tokens <= window {
				// Larger only when the newest content alone is: then refused too, it keeps nothing.
				f.ReferencesKeptSameSizeCut += same.Score.RefsKept
				f.UserFactsKeptSameSizeCut += same.Score.FactsKept
			}
			f.ReferencesKeptAdkctx += a.Score.RefsKept
			for _, r := range a.Reach {
				switch r {
				case replay.ReachOutputs:
					f.MissedReachOutputs++
				case replay.ReachHistory:
					f.MissedReachHistory++
				}
			}
			f.UserFacts += b.Score.Facts
			f.UserFactsKeptPlainCut += cut.Score.FactsKept
			f.UserFactsKeptAdkctx += a.Score.FactsKept
			if cut.Score.Head {
				f.TaskHeadPlainCut++
			}
			if a.Score.Head {
				f.TaskHeadAdkctx++
			}
			switch {
			case a.Refused:
				f.RequestsRefused++
			case !a.Sent:
				f.StepsNotReplayed++
			case a.Action == "trimmed":
				f.RequestsTrimmed++
				if a.FloorFits {
					f.RequestsTrimmedFloorFit++
				}
			}
			f.ContentsDropped += a.ContentsDropped
		}
		f.MissedOneRecallAway = f.MissedReachOutputs + f.MissedReachHistory
		f.Compactions = len(run.Compactions)
		for _, c := range run.Compactions {
			if c.Fallback {
				f.CompactionFallbacks++
			}
		}
		f.CompactionFailures = run.Failures
	}
	return out
}

// Add adds g to f (largest requests: the larger).
func (f *Figures) Add(g Figures) {
	f.Sessions += g.Sessions
	f.Steps += g.Steps
	f.TokensNoAdkctx += g.TokensNoAdkctx
	f.TokensPlainCut += g.TokensPlainCut
	f.TokensAdkctx += g.TokensAdkctx
	f.LargestNoAdkctx = max(f.LargestNoAdkctx, g.LargestNoAdkctx)
	f.LargestPlainCut = max(f.LargestPlainCut, g.LargestPlainCut)
	f.LargestAdkctx = max(f.LargestAdkctx, g.LargestAdkctx)
	f.OverWindowNoAdkctx += g.OverWindowNoAdkctx
	f.OverWindowPlainCut += g.OverWindowPlainCut
	f.References += g.References
	f.ReferencesKeptPlainCut += g.ReferencesKeptPlainCut
	f.ReferencesKeptAdkctx += g.ReferencesKeptAdkctx
	f.ReferencesKeptSameSizeCut += g.ReferencesKeptSameSizeCut
	f.UserFactsKeptSameSizeCut += g.UserFactsKeptSameSizeCut
	f.MissedOneRecallAway += g.MissedOneRecallAway
	f.MissedReachOutputs += g.MissedReachOutputs
	f.MissedReachHistory += g.MissedReachHistory
	f.UserFacts += g.UserFacts
	f.UserFactsKeptPlainCut += g.UserFactsKeptPlainCut
	f.UserFactsKeptAdkctx += g.UserFactsKeptAdkctx
	f.TaskHeadPlainCut += g.TaskHeadPlainCut
	f.TaskHeadAdkctx += g.TaskHeadAdkctx
	f.Compactions += g.Compactions
	f.CompactionFallbacks += g.CompactionFallbacks
	f.CompactionFailures += g.CompactionFailures
	f.RequestsTrimmed += g.RequestsTrimmed
	f.RequestsTrimmedFloorFit += g.RequestsTrimmedFloorFit
	f.ContentsDropped += g.ContentsDropped
	f.RequestsRefused += g.RequestsRefused
	f.StepsNotReplayed += g.StepsNotReplayed
}
