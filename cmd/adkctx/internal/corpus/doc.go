// Package corpus writes the two workloads on which adkctx's retention is measured (issue 28):
// sessions of agents like the recorded ones of real agents, in the public formats those are
// published in, generated offline and identical for a given seed and machine.
//
// # Shell sessions
//
// [Shell] writes sessions of a coding agent whose only tool is a shell, as mini-swe-agent
// trajectory files (".traj.json"), like SWE-bench bash-only runs:
//
//	{"info": {"exit_status": "Submitted", "submission": <the diff>, "model_stats": {...},
//	          "mini_version": ..., "config": {...}},
//	 "messages": [...], "trajectory_format": "mini-swe-agent-1", "instance_id": "google__go-cmp-417"}
//
// Most are in the text form ([FormatText]): a system message, the task as the first user message,
// then assistant messages holding a THOUGHT and exactly one ```bash block, each answered by a user
// message "<returncode>N</returncode>\n<output>\n…</output>". An output of 10,000 characters or
// more is shown as mini-swe-agent shows it: a <warning>, then <output_head> and <output_tail>
// (5,000 characters each) around <elided_chars>. The session ends with the submission command,
// whose output (the diff) is the last user message. Every third session is in the tool-call
// form ([FormatToolCall]): assistant messages call the "bash" tool with {"command": …} as OpenAI
// chat tool_calls, results are "tool" messages with the tool_call_id, and the run ends with an
// "exit" message holding the submission (the submitting call itself gets no tool message, as in
// mini-swe-agent).
//
// Each session works on a real Go module copied from the module cache ([DefaultModules]: modules
// without requirements that this repository's builds download): the copy becomes a git repository
// under a temporary directory, one token of its code is changed (an operator swapped, an
// off-by-one, a negation dropped, a boolean result inverted) so that some of its own tests fail
// (the change is kept only if the failure prints the same way twice), and the failing output
// becomes the task, as an issue would quote it. A scripted agent then works the task in 40 to 150
// steps, deciding each command from the real outputs of the previous ones: it lists and greps,
// reads the failing test and follows the calls from it to the bug, reads the helpers, wanders
// through callers, tests and neighbouring files (often returning to matches and names seen 20 or
// more steps before), writes a reproduction test in a heredoc and sees it fail with its
// file:line, sometimes edits the wrong line first and reverts it, fixes the bug with sed -i or by
// rewriting the function (or its small file) from a heredoc, runs the reproduction, the package's
// tests, go vet, removes the scratch files it created long before, shows git diff and submits.
// Two personas, modelled on the two recorded agents, differ in session length, how much they
// read at once, how they edit and how long their thoughts are.
//
// Every command really runs, with bash -c in the copy, offline (GOFLAGS=-mod=mod, GOPROXY=off,
// GOTOOLCHAIN=local); its output is recorded as the shell printed it, stdout and stderr
// interleaved. Only what changes from run to run is made fixed: the copy's directory shows as
// /testbed, test durations are replaced by a value that depends only on the package, clock times
// a test printed and file times are a fixed date, git commits have a fixed author and date, and
// go-cmp's randomly chosen non-breaking spaces are spaces. A verbose test run that prints its
// tests in another order the second time (parallel tests, subtests from a map) is recorded
// without -v.
//
// Each command runs as it would in a container, so generating takes time: the default 6
// sessions take about 30 s on two idle cores (about a minute of CPU time, almost all of it in the
// go commands, including those no session shows: the search for a change that fails the tests,
// and the second run of a verbose test, kept only if it prints the same); sessions on different
// modules run in parallel.
//
// # Service conversations
//
// [Service] writes conversations of a customer-service agent with 14 JSON tools over an airline:
// one file per conversation in OpenAI chat form,
//
//	{"messages": [...], "tools": [{"type": "function", "function": {"name", "description", "parameters"}}]}
//
// with a system message holding the airline's policy (about 2,000 tokens), several user
// requests per conversation (bookings, cancellations, flight changes, bags, passenger fixes,
// upgrades, complaints, flight status), assistant messages with "tool_calls" ({"id", "type":
// "function", "function": {"name", "arguments": <JSON string>}}) and "tool" messages with
// "tool_call_id", "name" and a JSON "content". Conversations have 36 to 62 messages.
//
// The airline (users such as "mia_li_3668" with credit cards, gift cards and certificates,
// a daily timetable of flights such as "QV417", reservations such as "4WQ1VK") is generated from
// the seed, and the tools really run on it: reads return its state as JSON, writes check the
// policy's hard rules, change it and return what changed. The scripted agent uses what the read
// tools returned: the payment ids of the user's profile, read at the start, are written back by
// bookings and changes many messages later; flight numbers come from searches, reservation ids
// from the profile. Service is pure computation: the default 10 conversations take under half a
// second.
package corpus
