package compaction

import (
	"slices"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/textcut"
)

// userText is a ledger's goal and user messages with their estimated tokens, fitted to a budget
// by fit.
type userText struct {
	goal     string
	goalCost int
	msgs     []UserMessage
	costs    []int
	gone     []bool // dropped by fit
	dropped  int    // dropped before and by fit
	tokens   int    // of the goal and the messages not dropped
}

func (l *Ledger) userText() *userText {
	u := &userText{goal: l.Goal, goalCost: budget.EstimateText(l.Goal), msgs: slices.Clone(l.Messages),
		costs: make([]int, len(l.Messages)), gone: make([]bool, len(l.Messages)), dropped: l.MessagesDropped}
	u.tokens = u.goalCost
	for i, m := range u.msgs {
		u.costs[i] = budget.EstimateText(m.Text)
		u.tokens += u.costs[i]
	}
	return u
}

// fit shortens and drops messages, one at a time in the order UserTextTokens documents, until
// the goal and the messages left take at most maxTokens; the goal is cut last.
func (u *userText) fit(maxTokens int) {
	older := len(u.msgs) - recentMessages
	stages := []func(i int) bool{
		func(i int) bool { return i < older && !u.msgs[i].Rule },
		func(i int) bool { return i < older },
		func(int) bool { return true },
	}
	for _, stage := range stages {
		for _, drop := range []bool{false, true} {
			for i := range u.msgs {
				if u.tokens <= maxTokens {
					return
				}
				if u.gone[i] || !stage(i) {
					continue
				}
				if drop {
					u.gone[i] = true
					u.tokens -= u.costs[i]
					u.dropped++
				} else if !u.msgs[i].Shortened {
					u.set(i, textcut.Runes(u.msgs[i].Text, shortMessageRunes))
					u.msgs[i].Shortened = true
				}
			}
		}
	}
	if u.tokens > maxTokens {
		u.goal = capTokens(u.goal, max(maxTokens, 0))
		u.tokens -= u.goalCost
		u.goalCost = budget.EstimateText(u.goal)
		u.tokens += u.goalCost
	}
}

// set replaces the text of message i.
func (u *userText) set(i int, text string) {
	if text == u.msgs[i].Text {
		return
	}
	u.msgs[i].Text = text
	u.tokens -= u.costs[i]
	u.costs[i] = budget.EstimateText(text)
	u.tokens += u.costs[i]
}

// kept returns the messages fit did not drop.
func (u *userText) kept() []UserMessage {
	out := make([]UserMessage, 0, len(u.msgs))
	for i, m := range u.msgs {
		if !u.gone[i] {
			out = append(out, m)
		}
	}
	return out
}
