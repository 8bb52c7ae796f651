// Package plan is adkctx's compaction planner: what a session's compacted view shows
// ([Viewer.View]), what a bounded read of the session must hold for that view ([Viewer.Needs]),
// and what one compaction covers and the marker it stores ([Prepare]: the window selection, the
// ledger continued, the summarizer run with its timeout, fallback and checks).
//
// Package compaction holds what users configure and read (Config, the summarizers, the Marker
// record and its Ledger); this package decides with them. The compactor
// (glue/internal/compactor) runs Prepare in the background and appends its marker; the history
// reader (glue/internal/history) asks Needs what a read must reach; the glue's sessions show
// View. See package compaction's documentation for the rules each part follows.
package plan
