// Command example is a small coding-assistant agent built with adk-go's runner and llmagent, with
// adkctx wired in by one call (Hooks.Wire, in wiring.go): token budgets, tool-output truncation,
// AGENTS.md instructions and session compaction, over sessions stored in SQLite and a zap
// JSON-lines log.
//
// The example is a Go module of its own: run it from this directory (from the repository
// root, `make run` runs the demo).
//
//	go run . -demo              # scripted 40-turn session, with and without adkctx, offline
//	go run . -demo -report json # the same figures as one JSON object
//	go run .                    # interactive; Gemini when GOOGLE_API_KEY is set
//	go run . web                # adk-go's launcher: REST API and web UI on :8080
//	go run . console            # adk-go's launcher: its console
//	go run . -metrics-addr 127.0.0.1:9464 ...  # adkctx's metrics for Prometheus
//	go run ./quickstart         # the README's wiring as a complete program (quickstart/main.go)
//
// Without GOOGLE_API_KEY / GEMINI_API_KEY it runs a deterministic offline model (no network) and
// the extractive summarizer. With a key it runs adk-go's Gemini model, and the summaries are
// written by the same model (extractive fallback). The demo always uses the offline model, so that
// both runs see identical answers, and compacts synchronously, so that its figures repeat.
//
// Files the user does not name (the extracted demo repository, the SQLite database, the log) are
// temporary and removed at exit; the database is closed on every way out (end of input, /quit,
// an error, Ctrl-C, SIGTERM), so its write-ahead log is merged into the file.
package main
