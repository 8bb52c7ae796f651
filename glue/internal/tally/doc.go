// Package tally keeps a session's running token accounting, per user turn and model call, and
// turns it into the budget.Report the hooks' Usage returns. The engine stores a session's tally
// in every call record, so a process that did not serve the session restores it from the newest
// one.
package tally
