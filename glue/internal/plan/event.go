package plan

import (
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/record"
)

// The rules the planner reads events by are compaction's own (internal/record), so a view and
// the ledger never disagree on who wrote an event or which events only carry a record.

func isUser(e *compaction.Event) bool       { return record.IsUser(e.Author, e.Content) }
func hasContent(e *compaction.Event) bool   { return record.HasContent(e.Content) }
func hasRecord(e *compaction.Event) bool    { return record.Has(e.Metadata) }
func isMarkerOnly(e *compaction.Event) bool { return record.MarkerOnly(e.Metadata, e.Content) }
func textOf(c *genai.Content) string        { return record.Text(c) }
