// Command example is a small coding-assistant agent built with adk-go's runner and llmagent, with
// adkctx wired in: token budgets, tool-output truncation, AGENTS.md instructions and session
// compaction, over sessions stored in SQLite and a zap JSON-lines log.
//
//	go run ./example -demo              # scripted 40-turn session, with and without adkctx, offline
//	go run ./example -demo -report json # the same figures as one JSON object
//	go run ./example                    # interactive; Gemini when GOOGLE_API_KEY is set
//
// Without GOOGLE_API_KEY / GEMINI_API_KEY it runs a deterministic offline model (no network). The
// demo always uses the offline model, so that both runs see identical answers.
package main
