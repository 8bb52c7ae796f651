package readback

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/internal/marks"

	"github.com/adkctx/adkctx/recall"
)

// Installed says which recall tools a request declares: one view of a session serves every agent
// of it, so whether the model can follow a note is decided per request.
type Installed struct {
	// Outputs: the request declares read_saved_output, which the notes on cut and excerpted
	// tool results name.
	Outputs bool
	// History: the request declares search_history and read_turn, which the summary's line
	// names.
	History bool
}

// InstalledIn returns which recall tools cfg (a request's configuration) declares.
func InstalledIn(cfg *genai.GenerateContentConfig) Installed {
	if cfg == nil {
		return Installed{}
	}
	declared := map[string]bool{}
	for _, t := range cfg.Tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			if d != nil && IsTool(d.Name) {
				declared[d.Name] = true
			}
		}
	}
	return Installed{Outputs: declared[recall.ToolReadOutput], History: declared[recall.ToolSearchHistory] && declared[recall.ToolReadTurn]}
}

// notesReport says what RewriteNotes rewrote: the excerpt notes, and whether the summary got
// its line.
type notesReport struct {
	Excerpts int
	Summary  bool
}

// RewriteNotes returns contents (a request's, as a compacted view shows them) as a model with the
// recall tools in should read them: with in.Outputs, the note of each tool result shown as an
// excerpt names the saved output holding it whole instead of asking for the tool to be run
// again — for a text truncation cut, the output the cut saved (the view's mark states its
// sizes); for any other, [marks.ExcerptNote], the result's own ([excerptName], saved by
// [SaveExcerpts] when the marker was stored); with in.History, the summary ends with [SummaryLine]. Without them it
// returns contents as they are. It is pure and copy-on-write (a content that changes is replaced
// in a new slice; nothing given is modified), idempotent, and byte-stable: equal contents,
// equal result, so requests keep extending each other for a provider's prompt cache.
func RewriteNotes(contents []*genai.Content, in Installed) []*genai.Content {
	out, _ := rewriteNotes(contents, in)
	return out
}

// rewriteNotes is RewriteNotes, with what it rewrote.
func rewriteNotes(contents []*genai.Content, in Installed) ([]*genai.Content, notesReport) {
	var rep notesReport
	var out []*genai.Content // copy of contents, made on the first change
	for i, c := range contents {
		var nc *genai.Content
		switch {
		case c == nil:
		case in.History && compaction.IsSummary(c):
			nc = withSummaryLine(c)
			rep.Summary = rep.Summary || nc != nil
		case in.Outputs:
			var n int
			nc, n = withExcerptNotes(c)
			rep.Excerpts += n
		}
		if nc == nil {
			continue
		}
		if out == nil {
			out = append([]*genai.Content(nil), contents...)
		}
		out[i] = nc
	}
	if out == nil {
		return contents, rep
	}
	return out, rep
}

// withSummaryLine returns summary c with SummaryLine at the end of its last text; nil when it
// has it already.
func withSummaryLine(c *genai.Content) *genai.Content {
	line := SummaryLine()
	last := -1
	for j, p := range c.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			if strings.Contains(p.Text, line) {
				return nil
			}
			last = j
		}
	}
	if last < 0 {
		return nil
	}
	np := *c.Parts[last]
	np.Text = strings.TrimRight(np.Text, "\n") + "\n\n" + line
	nc := *c
	nc.Parts = append([]*genai.Part(nil), c.Parts...)
	nc.Parts[last] = &np
	return &nc
}

// withExcerptNotes returns c with the excerpt notes of its tool results rewritten, and how many
// results it rewrote; nil when none.
func withExcerptNotes(c *genai.Content) (*genai.Content, int) {
	var parts []*genai.Part
	n := 0
	for j, p := range c.Parts {
		if p == nil || p.FunctionResponse == nil || !holdsString(p.FunctionResponse.Response, holdsExcerptNote) {
			continue
		}
		fr := *p.FunctionResponse
		// The excerpt's own output is named only when a note needs it (a result that was not cut).
		bare := sync.OnceValue(func() string { return excerptNote(excerptName(fr.Name, p.FunctionResponse.Response)) })
		fr.Response, _ = replaceNotes(fr.Response, bare).(map[string]any)
		np := *p
		np.FunctionResponse = &fr
		if parts == nil {
			parts = append([]*genai.Part(nil), c.Parts...)
		}
		parts[j] = &np
		n++
	}
	if parts == nil {
		return nil, 0
	}
	nc := *c
	nc.Parts = parts
	return &nc, n
}

// holdsExcerptNote reports whether s holds a note of the view on an excerpt that RewriteNotes
// rewrites: [marks.ExcerptNote], or the note of an excerpt of a cut result naming its saved
// output.
func holdsExcerptNote(s string) bool {
	if strings.Contains(s, marks.ExcerptNote) {
		return true
	}
	_, found := rewriteCutExcerpts(s, true)
	return found
}

// holdsBareNote reports whether s holds [marks.ExcerptNote]: an excerpt of a result that was
// not cut, which only the excerpt's own saved output holds whole.
func holdsBareNote(s string) bool { return strings.Contains(s, marks.ExcerptNote) }

// replaceNotes returns v with the view's excerpt notes rewritten in its strings, copying only what
// changes: [marks.ExcerptNote] becomes bare(), and the note of an excerpt of a cut result
// names the output the cut saved (see rewriteCutExcerpts).
func replaceNotes(v any, bare func() string) any {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, marks.ExcerptNote) {
			x = strings.ReplaceAll(x, marks.ExcerptNote, bare())
		}
		x, _ = rewriteCutExcerpts(x, false)
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
			if holdsString(e, holdsExcerptNote) {
				out[k] = replaceNotes(e, bare)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
			if holdsString(e, holdsExcerptNote) {
				out[i] = replaceNotes(e, bare)
			}
		}
		return out
	}
	return v
}

// rewriteCutExcerpts returns s with the note of each excerpt of a cut result (the view writes
// [marks.ExcerptHead], "; " and the cut's note, which names the saved output holding the
// whole output) replaced by excerptNote of that output; notes naming no saved output stay. With
// onlyFind it stops at the first such note. It reports whether it found one.
func rewriteCutExcerpts(s string, onlyFind bool) (string, bool) {
	if !strings.Contains(s, marks.ExcerptHead+"; ") {
		return s, false
	}
	var b strings.Builder
	at, found := 0, false
	for _, f := range marks.Find(s) {
		rest, ok := strings.CutPrefix(f.Note, marks.ExcerptHead+"; ")
		if !ok {
			continue
		}
		name := quotedOutputName(rest)
		if name == "" {
			continue
		}
		found = true
		if onlyFind {
			return s, true
		}
		f.Note = excerptNote(name)
		b.WriteString(s[at:f.Start])
		b.WriteString(f.Mark.String())
		at = f.End
	}
	if at == 0 {
		return s, found
	}
	b.WriteString(s[at:])
	return b.String(), found
}

// quotedOutputName returns the first saved output's name quoted in note (as OutputNote and the
// truncation note without the recall tools write it); "" when there is none.
func quotedOutputName(note string) string {
	i := strings.Index(note, `"`+OutputPrefix)
	if i < 0 {
		return ""
	}
	name, _, ok := strings.Cut(note[i+1:], `"`)
	if !ok || ValidateOutputName(name) != nil {
		return ""
	}
	return name
}

// excerptName returns the name of the saved output holding whole the tool result that a view
// shows as shown (its function response, cut to an excerpt): the tool's name and a hash of the
// excerpt, so the request step that sees only the excerpt names what the compactor saved. Equal
// excerpts of different results share a name: [SaveExcerpts] keeps them together.
func excerptName(tool string, shown map[string]any) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	if b, err := json.Marshal(shown); err == nil { // map keys sorted: equal maps, equal bytes
		h.Write(b)
	} else {
		fmt.Fprintf(h, "%v", shown) // fmt sorts map keys too
	}
	return fmt.Sprintf("%s%s-excerpt-%s.txt", OutputPrefix, nameSafe(tool, maxToolNameInName), hex.EncodeToString(h.Sum(nil)[:8]))
}

// SaveExcerpts saves whole, as text, the tool results a marker shows as excerpts
// ([plan.ExcerptsOf]) but for those whose every excerpted text truncation cut (their notes
// name the outputs the cuts saved, which hold more than the stored result), each under its
// excerptName: the results whose excerpts are equal
// together, in order, each headed by its tool and invocation. An output whose newest version
// holds the same bytes already is not saved again (a result a later marker still shows as an
// excerpt). It returns how many outputs it saved, and every failure joined.
func SaveExcerpts(ctx context.Context, st recall.Store, results []plan.Excerpted) (int, error) {
	var names []string
	byName := map[string][]plan.Excerpted{}
	for _, r := range results {
		if !holdsString(r.Shown, holdsBareNote) {
			continue // a cut result: its note names the output the cut saved whole
		}
		name := excerptName(r.Tool, r.Shown)
		if byName[name] == nil {
			names = append(names, name)
		}
		byName[name] = append(byName[name], r)
	}
	saved := 0
	var errs []error
	for _, name := range names {
		var b bytes.Buffer
		for i, r := range byName[name] {
			if i > 0 {
				b.WriteString("\n\n")
			}
			fmt.Fprintf(&b, "[%s result · invocation %s]\n%s\n", r.Tool, r.InvocationID, renderResponse(r.Stored))
		}
		if same, err := holds(ctx, st, name, b.Bytes()); err == nil && same {
			continue
		}
		if _, err := st.Save(ctx, name, b.Bytes(), historyMIME); err != nil {
			errs = append(errs, fmt.Errorf("recall: saving %s: %w", name, err))
			continue
		}
		saved++
	}
	return saved, errors.Join(errs...)
}

// holds reports whether the newest version of name holds data.
func holds(ctx context.Context, st recall.Store, name string, data []byte) (bool, error) {
	lay, err := st.Layout(ctx, name)
	if err != nil || lay.Size != int64(len(data)) {
		return false, err
	}
	chunks, err := st.ReadChunks(ctx, name, lay.Version, 0, len(lay.Chunks))
	if err != nil {
		return false, err
	}
	return bytes.Equal(bytes.Join(chunks, nil), data), nil
}
