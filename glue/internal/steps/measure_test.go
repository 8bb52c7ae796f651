package steps

import (
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// A content measured and then changed in place is caught by Check; one replaced by a new
// content (what every step does) is measured afresh.
func TestMeasuresCheckCatchesAChangeInPlace(t *testing.T) {
	contents := []*genai.Content{
		genai.NewContentFromText("first "+strings.Repeat("words ", 50), genai.RoleUser),
		genai.NewContentFromText("second", genai.RoleModel),
	}
	m := NewMeasures(contents, nil, true)
	before := m.Of(contents[0])
	if before.Tokens != budget.EstimateContent(contents[0]) || before.Print != Fingerprint(contents[0]) {
		t.Fatalf("measure %+v", before)
	}
	if err := m.Check(contents); err != nil {
		t.Fatalf("Check on unchanged contents: %v", err)
	}
	replaced := []*genai.Content{genai.NewContentFromText("a new content", genai.RoleUser), contents[1]}
	if err := m.Check(replaced); err != nil {
		t.Fatalf("Check after a replacement: %v", err)
	}
	if got := m.Of(replaced[0]); got.Tokens != budget.EstimateContent(replaced[0]) {
		t.Errorf("the new content's measure %+v", got)
	}
	contents[0].Parts[0].Text = "first " + strings.Repeat("words ", 24) + "word! " + strings.Repeat("words ", 25) // length and edges unchanged
	if err := m.Check(contents); err == nil {
		t.Fatal("Check missed a content changed in place")
	}
}

// Prints answers by position for the contents a request came in with, and from what was
// measured for the others; sizes unknown at first are estimated.
func TestMeasuresPrints(t *testing.T) {
	contents := []*genai.Content{
		genai.NewContentFromText("one", genai.RoleUser),
		genai.NewContentFromText("two", genai.RoleModel),
	}
	base := []Measure{{Print: Fingerprint(contents[0]), Tokens: 7}, {Print: Fingerprint(contents[1]), Tokens: -1}}
	m := NewMeasures(contents, base, false)
	prints, sizes := m.Prints(contents)
	if prints[0] != base[0].Print || sizes[0] != 7 || sizes[1] != budget.EstimateContent(contents[1]) {
		t.Errorf("prints %v sizes %v", prints, sizes)
	}
	moved := []*genai.Content{contents[1], contents[0]}
	if _, sizes := m.Prints(moved); sizes[1] != 7 || sizes[0] != budget.EstimateContent(contents[1]) {
		t.Errorf("sizes of moved contents %v", sizes)
	}
}
