// Package compaction keeps long-running sessions from dragging their whole history into every
// model call, without deleting an event and without leaving the model without its working
// context. It holds what a user configures and reads: [Config], the summarizers ([Summarizer],
// [ExtractiveSummarizer], [LLMSummarizer]) and the [Marker] record a compaction stores, with its
// [Ledger]. It depends on neither adk-go version: it works on its own [Event] type, which the glue
// of each adk-go major version (package hooks) converts a session's events to. What to compact
// and the view the model reads are adkctx's own (its planner drives this package); a program
// reads a stored session's markers with [ReadMarker] and their summaries with [Marker.Summary].
//
// # Markers
//
// A compaction appends one event (no content, author "user") whose CustomMetadata[[MetadataKey]]
// holds a [Marker]: the summary, and the ids of the events it newly covers. A marker names the
// marker it rolls up (Previous, Seq), so the markers of a session form a chain, and the newest
// one covers its own ids plus everything its chain covers. Coverage is by event id, never by
// position or timestamp: an event stored late with an old timestamp (a replica whose clock lags)
// is never hidden without having been summarized. startTimestamp, endTimestamp and
// compactedContent convert 1:1 to adk-python's and adk-go v2's EventCompaction record. Records
// written by adkctx's first release (version 1: ranges by timestamps and positions) are still
// read, and a new marker can roll one up.
//
// # View
//
// What the model sees of a session's events: per isolation scope the valid
// marker with the highest Seq wins; the events its chain covers are replaced by its summary,
// shown once, in place of the first covered event (or at the marker's position when none is in
// the slice being viewed); everything else stays, in order. A record that does not parse, or
// names an impossible range, is ignored with a warning and hides nothing — not even its own
// event's content. Parsed records are cached, so a view costs one pass over the events. Each
// summary shown starts with [SummaryHeader] ([IsSummary]) and its event carries
// [SummaryMetadataKey].
//
// # What is compacted
//
// Every compaction leaves the newest invocations raw: at least
// [Config.RetainRecentInvocations] (default 2) whole invocations, never split inside a
// call/response pair, so every request carries the previous turn itself, not only its summary.
//   - Sliding window (after an invocation, with [Config.Interval] set): once θ completed
//     invocations beyond the retained tail are raw, they are summarized. The tail a token-triggered
//     compaction kept is not wiped by a later sliding window ([Marker.KeepInvocations]).
//   - Tokens (a request approaches the soft limit) and manual: the newest invocations up to
//     [Config.RetainRecentTokens] stay raw (70% of the soft limit by default, less room for the
//     summary and for a large event on its way: the next compaction comes once the history grew
//     by the rest, so a provider's prompt cache keeps serving the prefix meanwhile); an
//     invocation too large on its own (a long tool loop) keeps its user message and newest steps
//     raw, masking before it summarizes: older tool results become excerpts first (the newest
//     ones, up to ¾ of the tail, stay whole), and a compaction that needs nothing else stores a
//     marker that only masks ([Marker.MasksOnly]).
//   - There is no sliding window unless [Config.Interval] asks for one (the cost policy): a
//     session that fits the window is not compacted.
//   - Pending calls (long-running without the client's answer, unanswered confirmations, calls
//     of the running invocation) stay raw, with everything paired to them.
//   - The tool results of the ended invocations left raw, except the newest, are shown as
//     excerpts (head and tail, [Config.RetainedToolResultBytes]) until the next compaction: it
//     re-sends that tail at full price anyway, so shortening it then costs no cached prompt
//     prefix. The newest invocation — the next request's previous turn — stays whole.
//
// # Summaries
//
// Each compaction continues the previous marker's [Ledger] with the events it newly covers: the
// user's goal and messages, verbatim whatever their language or phrasing while they fit
// [UserTextTokens], the files and paths the tools used with exact call counts, errors seen, the
// last answers, and a record of what the tools did and returned ([ledgerStep]). For a call whose
// argument is a shell script (found by content: it parses as one, with mvdan.cc/sh, and reads
// as a script, not prose), the record holds the files it read with their line ranges (cat, nl,
// sed -n, head, tail, pipelines of them), searched, wrote (redirections, heredocs, tee, sed -i,
// patches, cp and mv targets), created and removed, the command with its exit status (a result
// field, or the text: "<returncode>1</returncode>", "exit code 1"), and what the output named:
// file:line locations, paths, failing tests in the usual runners' shapes. For any other call, the
// identifying values it passed and the identifier-like values its result returned (ids, codes,
// dates, emails, numbers of 4 digits or more; JSON leaves with their key path), each with the
// newest call that returned it. Every part is bounded; past a bound the entry used longest ago
// goes and is counted. The [ExtractiveSummarizer]'s summary is that ledger (no model,
// deterministic), the record's oldest entries dropped first past its bound; an [LLMSummarizer]
// asks a model (best the agent's own) for goal, instructions, decisions, files, exact values,
// errors and open tasks, and gets the ledger's facts appended (the user's messages first), so
// messages are quoted and counts, paths and values never invented. On the agent's own model it
// sends a request the agent sent, the newest of the last few that shows every covered event
// ([SummaryInput].Prefix), cut after what the summary covers, with its instruction appended:
// the system instruction, tools and contents the provider's prompt cache
// still holds, which costs a fraction of a transcript and shows the summarizer what the agent
// saw. On another model, with a custom template, with [LLMSummarizer.NoSharedPrefix], or when no
// request sent showed every covered event, it
// sends a transcript, as it does after a reply to the shared prefix that calls a tool or holds
// no text. A summary is rejected (and the fallback used) when it is empty, holds only thoughts,
// calls a tool, is cut off, is larger than what it replaces or is larger than
// [Config.MaxSummaryTokens].
//
// # Preparing and storing
//
// adkctx's planner decides what to compact in a session's stored events and has the summary
// written ([Marker.SetSummary]); the event it appends carries [Marker.Metadata]. The hooks run
// compactions in the background, one compaction at a time per session (triggers that arrive
// meanwhile run once after it), bounded by [Config.Timeout] whatever the summarizer does;
// failures back off ([Config.Backoff]). They re-read the session before appending and discard
// the summary when a newer marker landed first. [Config.Synchronous] runs compactions on the
// triggering turn instead, for tests and batch jobs.
package compaction
