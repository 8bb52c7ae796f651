// Package hooks wires adkctx into adk-go v2 (google.golang.org/adk/v2): one constructor, New, and
// one call, Hooks.Wire, that adds adkctx's plugin and session-service wrapper to a
// runner.Config. Its API, configuration (adkctx.Config) and log schema are those of package
// github.com/adkctx/adkctx/hooks, the adk-go v1 glue; both are glue only, over one engine, and
// every decision is made by adkctx's adk-go-independent packages (budget, processors/...,
// compaction, agentsmd, instructions).
//
// It lives in its own module, github.com/adkctx/adkctx/adk2, because adk-go v2 needs Go ≥
// 1.26.5: the root module keeps serving adk-go v1 users on older Go, and a v2 application
// builds no adk-go v1 code. (Before its release the root module must stop requiring adk-go v1:
// see the module's README.md, "Layout".)
//
// What adk-go v2 changes, and how this package handles it:
//
//   - Isolation scopes. An event's IsolationScope (a task agent's conversation) becomes the core
//     event's Scope: compaction and the view work per scope, so a summary never mixes scopes,
//     and the summary event carries its scope, so only that scope's agents see it. Marker
//     events (no content) carry no scope: adk-go routes the user's next message into the scope
//     of the newest scoped event of an open task, and a marker must never look like one. The
//     call that delegated a still-open task stays raw: adk-go resumes the task, and reads its
//     input, through that call.
//   - Workflow agents. The plugin works whatever the root agent is (llmagent, a workflow
//     agent, a sequential agent). Workflow bookkeeping events without content (node outputs,
//     routes) join the invocation they belong to and never count as invocations of their own.
//     Wire learns the summarizer's model from the root agent or its first LLM sub-agent: list
//     a workflow's LLM agents in its SubAgents (as adk-go advises), or set
//     Compaction.Summarizer.
//   - The unified agent.Context. In callbacks adk-go v2 hands a context that logs "not
//     supported" for invocation-level methods (Session, IsolationScope, Agent…): the callbacks
//     call only what a callback context supports; the plugin's run callbacks read the session.
package hooks
