//go:build ignore

package billing

import (
	"errors"
	"fmt"

	"acme.example/vendor/money"
)

// ErrUnknownRegion is returned for a region without tax rules.
var ErrUnknownRegion = errors.New("billing: unknown region")

// TaxRules maps a region to its tax rate.
type TaxRules map[string]money.Rate

// Rate returns the region's rate (1 + tax), e.g. 1.21 for 21% VAT.
func (r TaxRules) Rate(region string) (money.Rate, error) {
	rate, ok := r[region]
	if !ok {
		return money.Rate{}, fmt.Errorf("%w: %q", ErrUnknownRegion, region)
	}
	return rate, nil
}

// DefaultRules are the rates from config/billing.yaml.
func DefaultRules() TaxRules {
	return TaxRules{
		"eu-west": money.MustRate("1.21"),
		"us-east": money.MustRate("1.08875"),
		"uk":      money.MustRate("1.20"),
	}
}
