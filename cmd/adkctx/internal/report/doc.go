// Package report turns replays (package replay) into figures per session and in total, and
// writes them as a text table, as JSON for machines, or as a self-contained HTML page with a
// per-step chart. Writers stream: a session's figures are written when its replay ends, so a
// report over any corpus holds one session at a time.
package report
