package replay

import (
	"context"
	"fmt"
	"testing"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
	"github.com/adkctx/adkctx/compaction"
)

func TestSmoke(t *testing.T) {
	for _, f := range []string{"../trajectory/testdata/chat.json", "../trajectory/testdata/text.traj.json", "../trajectory/testdata/atif.json", "../trajectory/testdata/messages.json"} {
		for s, err := range trajectory.ReadFile(f) {
			if err != nil {
				t.Fatal(err)
			}
			r, err := New(Estimator, []Config{{Window: 8192, Summarizer: Extractive, Recall: true, Base: adkctx.Config{Compaction: &compaction.Config{}}}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Replay(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			for k, b := range res.Baseline {
				a := res.Runs[0].Steps[k]
				fmt.Printf("%s step %d: base %d (%d contents) %+v | adkctx %d %s %+v\n", f, k, b.Tokens, b.Contents, b.Score, a.Tokens, a.Action, a.Score)
			}
		}
	}
}
