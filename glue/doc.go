// Package glue is the seam between adkctx's core and the glue of each adk-go major version
// (package hooks for google.golang.org/adk, adk2/hooks for google.golang.org/adk/v2).
// Applications do not import it: they use package hooks.
//
// The glue converts, the core decides. The glue implements [Store] and [Read] over adk-go's
// session service, turning its events into [compaction.Event] values (each keeping the glue's
// own event as its Source), and turns adk-go's callbacks into calls of [Engine]'s methods. The
// core does the rest: the request processors and budgets, compaction, the bounded reads of what
// the compacted view needs, the retried appends, the one view per session value ([Sessions],
// [View]) the glue's sessions show, item by item ([Shown]), and each call of the recall tools
// ([Engine.Recall]) on the calling session's saved outputs, a recall.Store the glue builds on the
// runner's artifact service.
//
// Compatibility: the glue modules of a release require the core of the same release; this
// package may change between minor versions (v0.x), and every change is recorded by the API
// check (api/, make api).
package glue
