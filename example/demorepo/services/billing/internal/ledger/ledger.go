//go:build ignore

// Package ledger records every money movement, append-only.
package ledger

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Kind is the kind of a ledger entry.
type Kind string

const (
	Charge     Kind = "charge"
	Refund     Kind = "refund"
	Adjustment Kind = "adjustment"
)

// ErrNegativeCharge is returned for a charge below zero (use a refund).
var ErrNegativeCharge = errors.New("ledger: negative charge")

// Entry is one money movement.
type Entry struct {
	Seq         int64
	InvoiceID   string
	Kind        Kind
	AmountMinor int64
	RecordedAt  time.Time
}

// Ledger is an in-memory append-only ledger (the SQL one lives in the store package).
type Ledger struct {
	mu      sync.Mutex
	entries []Entry
}

// Append records an entry and returns its sequence number.
func (l *Ledger) Append(_ context.Context, e Entry) (int64, error) {
	if e.Kind == Charge && e.AmountMinor < 0 {
		return 0, ErrNegativeCharge
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = int64(len(l.entries) + 1)
	l.entries = append(l.entries, e)
	return e.Seq, nil
}

// Balance sums the entries of one invoice. FIXME: O(n) per call; index by invoice id.
func (l *Ledger) Balance(invoiceID string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum int64
	for _, e := range l.entries {
		if e.InvoiceID != invoiceID {
			continue
		}
		switch e.Kind {
		case Refund:
			sum -= e.AmountMinor
		default:
			sum += e.AmountMinor
		}
	}
	return sum
}
