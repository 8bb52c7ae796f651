// Package history is how adkctx reads and appends to a session's stored events, independent of
// adk-go's types: the glue of each adk-go major version (package hooks) asks it what to read and
// whether a read holds what the compacted view needs, and appends through its retry policy.
//
// # Bounded reads
//
// The model sees a summary and a raw tail, so a turn needs only the newest part of a session:
// its raw events and each isolation scope's winning marker ([plan.Viewer.Needs]). A
// [Reader] remembers, per session, the oldest timestamp that view needed at the last read, and
// asks storage only for events stamped at or after it (adk-go's GetRequest.After), less a margin
// for writers whose clocks lag. The first read of a session in a process asks for the newest
// events (GetRequest.NumRecentEvents) and, when the newest marker says the view reaches further
// back (Marker.ReadFrom), for what it needs. A read is trusted only when it is complete:
//
//   - every raw event a winning marker left before it is there (Marker.RawCount);
//   - the newest stored event is there (the session's last update time);
//   - every event read is stamped with a UTC offset at or above the one the query was written
//     in (SQLite compares timestamps as text in each event's own offset);
//
// otherwise the session is read whole, as without adkctx: a bounded read may cost more, never
// lose an event. adkctx stamps every event it appends in UTC and after the session's newest
// event (Stamp), so a session written only through adkctx is ordered by its timestamps whatever
// the writers' time zones, daylight-saving changes and clocks.
//
// # Appends
//
// adk-go's database service refuses an append through a session read before its last update.
// [Append] retries such a refusal (and a store busy with another writer) through a fresh read
// when what changed since the read is acceptable to the caller ([Changes]): only adkctx's own
// markers for a turn's events, no newer marker of the same scope for a marker.
package history
