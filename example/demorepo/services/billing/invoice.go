//go:build ignore

// Package billing creates invoices from orders.
package billing

import (
	"errors"
	"fmt"
	"time"

	"acme.example/vendor/money"
)

// ErrEmptyInvoice is returned when an order has no lines.
var ErrEmptyInvoice = errors.New("billing: invoice has no lines")

// Line is one invoice line.
type Line struct {
	SKU       string
	Quantity  int
	UnitMinor int64 // price in minor units (cents)
}

// Invoice is a customer's invoice for one order.
type Invoice struct {
	ID         string
	CustomerID string
	Region     string
	Currency   string
	Lines      []Line
	CreatedAt  time.Time
}

// Subtotal sums the lines without tax. It never rounds: rounding happens once, on the total.
func (inv *Invoice) Subtotal() money.Amount {
	var sum money.Amount
	for _, l := range inv.Lines {
		sum = sum.Add(money.Minor(l.UnitMinor).Mul(int64(l.Quantity)))
	}
	return sum
}

// Total applies the region's tax and rounds half-even once.
func (inv *Invoice) Total(rules TaxRules) (money.Amount, error) {
	if len(inv.Lines) == 0 {
		return money.Amount{}, ErrEmptyInvoice
	}
	rate, err := rules.Rate(inv.Region)
	if err != nil {
		return money.Amount{}, fmt.Errorf("invoice %s: %w", inv.ID, err)
	}
	// TODO: discounts are applied in handlers.go today; move them here before tax.
	return inv.Subtotal().MulRate(rate).RoundHalfEven(), nil
}
