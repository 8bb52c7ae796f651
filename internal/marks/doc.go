// Package marks writes and reads back the mark line a cut leaves in a text ("[... output
// truncated: …]"): package truncate writes it, and the compaction view and the recall tools read
// it back, to say where a stored output was cut and where the whole of it is kept. It also holds
// the notes an excerpt of an older tool result carries.
package marks
