//go:build ignore

package billing

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
)

// Server serves the billing HTTP API.
type Server struct {
	Store  Store
	Rules  TaxRules
	Logger *slog.Logger
}

// Store persists invoices.
type Store interface {
	Create(r *http.Request, inv *Invoice) error
	Get(r *http.Request, id string) (*Invoice, error)
}

// ErrNotFound is returned by Store.Get for an unknown invoice.
var ErrNotFound = errors.New("billing: invoice not found")

// Routes registers the handlers.
func (s *Server) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /invoices", s.createInvoice)
	mux.HandleFunc("GET /invoices/{id}", s.getInvoice)
}

func (s *Server) createInvoice(w http.ResponseWriter, r *http.Request) {
	var inv Invoice
	if err := json.NewDecoder(r.Body).Decode(&inv); err != nil {
		http.Error(w, "bad invoice", http.StatusBadRequest)
		return
	}
	// TODO: apply discounts in Invoice.Total instead (see invoice.go).
	total, err := inv.Total(s.Rules)
	if err != nil {
		s.Logger.Warn("invoice rejected", "request_id", r.Header.Get("X-Request-Id"), "err", err)
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	if err := s.Store.Create(r, &inv); err != nil {
		s.Logger.Error("invoice not stored", "request_id", r.Header.Get("X-Request-Id"), "err", err)
		http.Error(w, "storage error", http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"id": inv.ID, "total_minor": total.MinorUnits()})
}

func (s *Server) getInvoice(w http.ResponseWriter, r *http.Request) {
	inv, err := s.Store.Get(r, r.PathValue("id"))
	if errors.Is(err, ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, "storage error", http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(inv)
}
