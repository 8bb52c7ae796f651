package readback

import (
	"fmt"
	"slices"
	"strings"

	"github.com/adkctx/adkctx/recall"
)

// ToolNames returns the recall tools' names in the order the tools are declared.
func ToolNames() []string {
	return []string{recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn}
}

// IsTool reports whether name is one of the recall tools (their outputs are not saved again, and
// their notes are rewritten only when they are declared).
func IsTool(name string) bool { return slices.Contains(ToolNames(), name) }

// Name prefixes of what recall reads. Only names with these prefixes are reachable through the
// tools: an application's own artifacts, and user-scoped ("user:") ones, which every session of
// the user shares, never are.
const (
	// OutputPrefix starts the name of every full tool output adkctx saves.
	OutputPrefix = "adkctx-tool-output-"
	// historyPrefix starts the name of every history segment [WriteHistory] saves.
	historyPrefix = "adkctx-history-"
)

// maxNameBytes bounds a saved output's name.
const maxNameBytes = 255

// OutputName names the saved output holding cut index of count of a tool's result (the
// truncation step's cuts): OutputPrefix + "<tool>-<call>.txt" when it is the only one,
// "<tool>-<call>-<n>.txt" (n from 1) when there are several; ".bin" instead of ".txt" when the
// bytes are not valid UTF-8 text. The tool's and the call's parts are made safe and bounded
// (nameSafe), so every name passes ValidateOutputName.
func OutputName(tool, callID string, index, count int, text bool) string {
	if callID == "" {
		callID = "call"
	}
	ext := ".bin"
	if text {
		ext = ".txt"
	}
	name := OutputPrefix + nameSafe(tool, maxToolNameInName) + "-" + nameSafe(callID, maxCallIDInName)
	if count > 1 {
		name += fmt.Sprintf("-%d", index+1)
	}
	return name + ext
}

// Bounds of the parts of a saved output's name (OutputName, excerptName).
const (
	maxToolNameInName = 64
	maxCallIDInName   = 96
)

// nameSafe replaces every byte of s but ASCII letters, digits, '-' and '_' with '_', and keeps
// at most max bytes of it: a part of a saved output's name.
func nameSafe(s string, max int) string {
	b := []byte(s[:min(len(s), max)])
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// ValidateOutputName returns an *inputError when name cannot be a saved tool output's name: empty,
// over [maxNameBytes], not starting with [OutputPrefix], or holding anything but ASCII letters,
// digits, '-', '_' and '.' (so no path separator, no "..", no absolute path, no "user:" scope).
func ValidateOutputName(name string) error {
	switch {
	case name == "":
		return inputErrorf("name is empty: pass the name a truncation note gives (%s…)", OutputPrefix)
	case len(name) > maxNameBytes:
		return inputErrorf("name is %d bytes long; saved output names are at most %d", len(name), maxNameBytes)
	case !strings.HasPrefix(name, OutputPrefix):
		return inputErrorf("%q is not a saved tool output of this session: names start with %q", clip(name, 80), OutputPrefix)
	case strings.Contains(name, ".."):
		return inputErrorf("%q is not a saved output name: \"..\" is not allowed", clip(name, 80))
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return inputErrorf("%q is not a saved output name: only letters, digits, '-', '_' and '.' are allowed", clip(name, 80))
		}
	}
	return nil
}

// OutputNote is the text a truncation note carries when the recall tools are installed: where
// the full output is and the tool that reads it (its description says how to page and search).
// It is short, since every request carries the notes of the results it shows: 25 bytes more
// than without the tools. The name comes first: a cut mark keeps 200 bytes of its note, which
// hold the whole note for names up to about 150 bytes and the name itself up to about 175
// (adkctx's names are 60 to 80). Without the tools the note stays
// `full output saved as artifact "<name>"`.
func OutputNote(name string) string {
	return fmt.Sprintf("full output saved as %q; read it with %s", name, recall.ToolReadOutput)
}

// excerptNote is the note on a tool result shown as an excerpt in the raw tail, when the recall
// tools are installed and the result's full text is reachable: it points at the saved result
// instead of telling the model to run the tool again (which re-runs tests or a deploy). name is
// the saved output holding the result in full, or "" when the stored result is the whole result:
// then the note points at the turn through read_turn once it is covered, and at the output
// search meanwhile.
func excerptNote(name string) string {
	if name != "" {
		return fmt.Sprintf("older tool result shortened; full text saved as %q: read it with %s, do not run the tool again",
			name, recall.ToolReadOutput)
	}
	return fmt.Sprintf("older tool result shortened; do not run the tool again — once earlier turns are summarized, find it with %s(query=…) and read it with %s(turn=…, whole=true)",
		recall.ToolSearchHistory, recall.ToolReadTurn)
}

// SummaryLine is the line a summary carries when the recall tools are installed: the turns it
// covers can still be searched and read, and an exact value the agent saw before (a name, an
// id, a path, an error) is one search away — nothing else in the request says it is there.
func SummaryLine() string {
	return fmt.Sprintf("Earlier turns and tool outputs are kept word for word: %s(query=…) finds an exact name, id, path or "+
		"error in the turns (read one with %s(turn=…)), %s(query=…) in the saved outputs.",
		recall.ToolSearchHistory, recall.ToolReadTurn, recall.ToolSearchOutputs)
}

// clip returns s cut to at most n bytes on a rune boundary, for names quoted in errors.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
