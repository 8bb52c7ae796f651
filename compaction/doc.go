// Package compaction keeps long-running adk-go sessions from dragging their
// whole history into every model call, without ever deleting an event.
//
// Older events are summarized into one marker event appended to the session
// (sessions are append-only); storage keeps every original event, and the
// model sees the summary plus the recent events.
//
// # Marker
//
// A [Marker] is stored in event.CustomMetadata[[MetadataKey]]
// ("_adk_compaction"), because adk-go v1.7.0's EventActions has no
// compaction field. The record is a JSON-compatible map with camelCase keys
// ([Marker.Map]); its startTimestamp, endTimestamp (float seconds) and
// compactedContent convert 1:1 to adk-python's and upstream adk-go v2's
// EventCompaction ([Marker.EventCompaction]). The rest makes the range
// exact and observable: first/last covered event and invocation ids, the
// covered events sharing an edge timestamp (EdgeEventIDs), events inside the
// range deliberately left raw (ExcludedEventIDs, e.g. pending calls), event
// count, token counts, compression ratio, trigger and summarizer.
//
// [NewMarkerEvent] builds the marker event: no Content (so adk-go skips it
// even when the session is read without the view), Author "user".
// [Marker.SetRange] fills the range fields from a slice of stored events.
// [ReadMarker] parses what any session service hands back — the map after a
// database round-trip (float64 numbers, []any, nested maps), a *Marker, JSON
// bytes or string — and reports bad records as *[InvalidMarkerError].
//
// # View
//
// [View] turns a session's stored events into what the model should see:
// markers disappear; an event is replaced only by a marker appended after
// it whose range covers it (newest marker wins; a rolled-up summary
// subsumes the ones it contains); each summary is emitted once, in place of
// the first event it wins, as a "user" event whose text starts with
// "[Summary of earlier conversation]"; everything else stays in order. A
// marker that does not parse, or has an inverted or empty range, is ignored
// with a warning and hides nothing. Coverage uses stream positions and ids,
// not timestamps alone, so an uncovered event sharing an edge timestamp is
// never hidden. View is linear in the number of events however many markers
// overlap.
//
// # Service
//
// [NewService] wraps a [session.Service] (in-memory, database, Vertex AI):
// sessions returned by Create, Get and List report the view from Events(),
// recomputed lazily when the stored events change, so adk-go's own history
// building (branches, other agents' events, function-response
// rearrangement) works on summary + recent events. AppendEvent unwraps the
// session before delegating; [Unwrap] and [RawEvents] reach the stored
// events. Wrap a service only when compaction is configured: a marker is an
// erase-and-inject primitive. The wrapper passes adk-go's
// sessiontestsuite over the in-memory and SQLite services.
//
// # Compactor
//
// A [Compactor] decides when and what to compact and appends the marker:
// a sliding window after each invocation (θ uncovered invocations plus ω
// earlier ones for continuity), and a token-aware path that keeps the most
// recent events raw and rolls the previous summary into the new one, so the
// prompt stays bounded. It never splits a function call from its response
// nor summarizes away a pending call, runs one compaction per session at a
// time on a detached context with a timeout, and re-reads the session
// before appending so a concurrent writer's event is never hidden. A
// [Summarizer] produces the replacement content: an LLM summarizer over a
// bounded, escaped transcript, or an extractive one that needs no model
// (the default, and the fallback when the LLM fails).
package compaction
