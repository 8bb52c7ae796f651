package agentsmd_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/internal/config"
)

func TestConfigValidate(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name   string
		cfg    agentsmd.Config
		fields []string // the fields reported, in order; none: valid
	}{
		{name: "zero value"},
		{name: "limits at their maximum", cfg: agentsmd.Config{MaxFileBytes: gib, TextBudget: gib, MaxImportDepth: 100}},
		{name: "plain names", cfg: agentsmd.Config{RootMarkers: []string{"go.mod", ".git"}, FallbackNames: []string{"CLAUDE.md"}}},
		{name: "negative MaxFileBytes", cfg: agentsmd.Config{MaxFileBytes: -1}, fields: []string{"MaxFileBytes"}},
		{name: "MaxFileBytes over 1 GiB", cfg: agentsmd.Config{MaxFileBytes: gib + 1}, fields: []string{"MaxFileBytes"}},
		{name: "negative TextBudget", cfg: agentsmd.Config{TextBudget: -1}, fields: []string{"TextBudget"}},
		{name: "TextBudget over 1 GiB", cfg: agentsmd.Config{TextBudget: gib + 1}, fields: []string{"TextBudget"}},
		{name: "negative MaxImportDepth", cfg: agentsmd.Config{MaxImportDepth: -1}, fields: []string{"MaxImportDepth"}},
		{name: "marker with a separator", cfg: agentsmd.Config{RootMarkers: []string{"a/b"}}, fields: []string{"RootMarkers[0]"}},
		{name: "marker with a backslash", cfg: agentsmd.Config{RootMarkers: []string{`a\b`}}, fields: []string{"RootMarkers[0]"}},
		{name: "empty marker", cfg: agentsmd.Config{RootMarkers: []string{".git", ""}}, fields: []string{"RootMarkers[1]"}},
		{name: "dot-dot fallback", cfg: agentsmd.Config{FallbackNames: []string{".."}}, fields: []string{"FallbackNames[0]"}},
		{name: "dot fallback", cfg: agentsmd.Config{FallbackNames: []string{"."}}, fields: []string{"FallbackNames[0]"}},
		{
			name:   "every problem reported",
			cfg:    agentsmd.Config{MaxFileBytes: -1, TextBudget: -1, MaxImportDepth: -1, RootMarkers: []string{"/"}, FallbackNames: []string{"x/y.md"}},
			fields: []string{"MaxFileBytes", "TextBudget", "MaxImportDepth", "RootMarkers[0]", "FallbackNames[0]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			var got []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var ce *config.Error
					if !errors.As(e, &ce) {
						t.Fatalf("%v is not a *adkctx.ConfigError", e)
					}
					got = append(got, ce.Field)
				}
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("fields reported (-want +got):\n%s", diff)
			}
		})
	}
}
