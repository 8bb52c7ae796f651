// Package reliability is adkctx's red-team suite: each attack an operator's red team ran against
// adkctx (issue 9) has a test that failed before its fix, here or next to the code it attacks,
// and each figure (time, memory, goroutines) is a benchmark and, where it can be counted, a
// test. The list, with where each lives:
//
//	attack                                             test / benchmark
//	summarizer ignoring its context                    hooks.TestSummarizerIgnoringItsContextIsBounded, compaction (runSummarizer)
//	summarizer failing on every call                   TestFailingSummarizerBacksOff
//	replicas with skewed clocks on one SQLite session  TestSkewedReplicasHideNothing
//	event with content and an invalid marker           TestContentBesideAnInvalidMarkerIsShown
//	tool output nested 150 levels deep                 processors/truncate TestValueBoundsAnyShape, budget TestEstimateValueUnwalkable
//	one result of 20,000 small strings                 processors/truncate TestValueBoundsAnyShape
//	8 parallel results over a 16K window               glue/internal/steps TestEnforceBudgetParallelResultsShareOneBudget, TestParallelResultsThroughTheRunner
//	binary / invalid UTF-8 output, []byte results      hooks TestFullOutputArtifactsAreByteExact
//	1 GB tool output with an artifact service          hooks BenchmarkHugeToolOutput (peak heap ÷ output)
//	directory swapped with a symlink (AGENTS.md)       instructions/internal/discover TestDiscoverSymlinkSwappedBetweenCheckAndOpen, TestDiscoverSymlinkSwapRace
//	AGENTS.md swapped with a FIFO                      instructions/internal/discover TestDiscoverFIFOSwappedBetweenCheckAndOpen, TestDiscoverFIFOSwapNeverBlocks, instructions TestLoaderFIFOSwap
//	an AGENTS.md importing 1,000 files of 64 KiB       instructions/internal/discover BenchmarkDiscoverImportAmplification
//	8,192-token window over 200 turns                  TestLongProviderCountNeverPassesTheHardLimit
//	4 runners on one session                           TestRunnersShareOneCompaction
//	distinct model names                               TestPerNameStateIsBounded
//	background marker vs a running turn (stale, busy)  hooks TestBackgroundMarkerNeverFailsARunningTurn
//	storage conflicts by error kind, per backend       internal/errkind (SQLite), internal/errkind (PostgreSQL)
//	PostgreSQL, several OS processes                   internal/pgtest TestMultiProcessConcurrent, TestMultiProcessAlternating
//	goroutines and heap over 10,000 invocations        TestGoroutinesStayFlat, engine TestStateStaysBoundedAcrossSessions, BenchmarkLongSessionIsFlat
package reliability
