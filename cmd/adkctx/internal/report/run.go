package report

import (
	"context"
	"iter"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/source"
)

// Options configure Replay.
type Options struct {
	// SkipBad lists a session that cannot be read or replayed in the returned Skipped instead
	// of failing the run.
	SkipBad bool
	// Writers receive each session as its replay ends (none: only the totals are computed).
	Writers []Writer
	// Done, when set, is called after each session replayed.
	Done func(source.Item)
}

// Replay replays every session of items with rp, one at a time, writes each to the writers and
// returns the totals per configuration and what was skipped. It is the whole command minus its
// flags: a figure over a corpus calls it with the corpus's sessions (source.ReadFiles) and
// asserts on the totals. Writers are not closed.
func Replay(ctx context.Context, rp *replay.Replayer, items iter.Seq[source.Item], o Options) ([]Figures, []Skipped, error) {
	totals := make([]Figures, len(rp.Configs()))
	var skipped []Skipped
	for it := range items {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		err := it.Err
		var res *replay.Result
		if err == nil {
			res, err = rp.Replay(ctx, it.Session)
		}
		if err != nil {
			if !o.SkipBad {
				return nil, nil, err
			}
			skipped = append(skipped, Skipped{Source: it.Source, Error: err.Error()})
			continue
		}
		figs := Compute(res, rp)
		for i := range totals {
			totals[i].Add(figs[i])
		}
		for _, w := range o.Writers {
			if err := w.Session(res, figs); err != nil {
				return nil, nil, err
			}
		}
		if o.Done != nil {
			o.Done(it)
		}
	}
	return totals, skipped, nil
}
