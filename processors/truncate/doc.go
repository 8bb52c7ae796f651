// Package truncate is the head+tail text cutter used on tool outputs.
//
// Text keeps the head and the tail of a text within a byte and a line limit (defaults 10 KiB and
// 256 lines, see Config) and puts one marker line between them that says how many lines and bytes
// were left out, the original size, and an optional note such as the name of an artifact holding
// the full output. The tail is always kept: the last lines of a failing build are what matter.
// Cuts are UTF-8 safe and the cost is one newline count over the input plus the kept size.
//
// Value applies the same limits to a whole tool result of any shape, as JSON: the budget is shared
// between the elements of each map and list; long lists and maps keep their first and last
// elements with a marker counting the rest; []byte, values of other Go types and containers
// nested more than 64 levels deep are cut as text or JSON text; cycles become a marker. It never
// mutates its input, and reports each cut (Cut: its path and its original, byte-exact for strings
// and []byte, JSON for elements left out) so the caller can store it whole and name it in that
// cut's marker.
package truncate
