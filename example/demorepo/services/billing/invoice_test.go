//go:build ignore

package billing

import (
	"errors"
	"testing"
)

func TestTotalRoundsHalfEvenOnce(t *testing.T) {
	inv := &Invoice{ID: "INV-1", Region: "eu-west", Lines: []Line{
		{SKU: "pen", Quantity: 3, UnitMinor: 105},
		{SKU: "pad", Quantity: 1, UnitMinor: 250},
	}}
	got, err := inv.Total(DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	if got.MinorUnits() != 684 { // (315+250) × 1.21 = 683.65 → 684
		t.Fatalf("total = %d, want 684", got.MinorUnits())
	}
}

func TestTotalUnknownRegion(t *testing.T) {
	inv := &Invoice{ID: "INV-2", Region: "mars", Lines: []Line{{SKU: "x", Quantity: 1, UnitMinor: 1}}}
	if _, err := inv.Total(DefaultRules()); !errors.Is(err, ErrUnknownRegion) {
		t.Fatalf("err = %v, want ErrUnknownRegion", err)
	}
}
