package engine

import (
	"testing"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/glue/internal/readback"
	"github.com/adkctx/adkctx/processors/truncate"
)

// The recall tools' results stay under the truncation limits, so they are not cut again; under
// limits too low for that they ask for recall's smallest page, never for its 8 KiB default
// (a bound of 0 or less would mean the default).
func TestRecallLimitsFollowTheTruncationLimits(t *testing.T) {
	for _, tc := range []struct {
		name                string
		cfg                 truncate.Config
		wantBytes, wantLine int
	}{
		{"defaults", truncate.Config{}, readback.DefaultMaxResultBytes, readback.DefaultMaxResultLines},
		{"lower", truncate.Config{MaxBytes: 4096, MaxLines: 50}, 4096 - 1024, 40},
		{"below recall's smallest page", truncate.Config{MaxBytes: 512, MaxLines: 3}, 1, 2},
		{"exactly 1 KiB", truncate.Config{MaxBytes: 1024}, 1, readback.DefaultMaxResultLines},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(adkctx.Config{Truncation: tc.cfg})
			if err != nil {
				t.Fatal(err)
			}
			got := e.RecallLimits()
			if got.MaxResultBytes != tc.wantBytes || got.MaxResultLines != tc.wantLine {
				t.Errorf("RecallLimits() = %d bytes, %d lines; want %d, %d", got.MaxResultBytes, got.MaxResultLines, tc.wantBytes, tc.wantLine)
			}
		})
	}
}
