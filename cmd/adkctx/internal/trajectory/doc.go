// Package trajectory reads recorded agent sessions into one neutral type, Session: the
// conversation as a sequence of turns (a user message and the agent's steps that answered it),
// each step the model's reply (text and function calls) with the recorded output of each call.
//
// Files are recognized by their content, never by their name:
//
//   - OpenAI-style chat messages with tool_calls: an object {"messages": [...], "tools": [...]},
//     a bare array of messages, or tau-bench's results (an array of {"task_id", "traj", ...}
//     records, each record one session); messages in Anthropic's form (tool_use and
//     tool_result content blocks, "system" beside them) too;
//   - mini-swe-agent trajectories (.traj, .traj.json: {"trajectory_format": "mini-swe-agent-1…",
//     "messages": [...]}), in their text-action form (a fenced bash block in the assistant's
//     reply, the observation in the next user message) and their tool-call form;
//   - the Agent Trajectory Interchange Format (ATIF: {"schema_version": "ATIF-v1.x", "steps":
//     [...]});
//   - a stored adk session in JSON ({"id", "appName", "userId", "events": [...]}), as adk-go's
//     REST API returns it and adk-python's API server or dump writes it, or an array of them;
//   - Claude Code transcripts (JSON Lines of typed records: "user" and "assistant" messages in
//     Anthropic's content-block form; the other records are bookkeeping);
//   - a logged OpenAI Responses API request ({"model", "instructions", "tools", "input"}), its
//     items read as a Codex rollout's;
//   - genai contents: a logged Gemini API request ({"contents", "systemInstruction", "tools"},
//     camelCase or the Python SDK's snake_case) or a bare array of contents;
//   - Gemini CLI session files ({"sessionId", "projectHash", "messages": [...]}: the person's
//     and the model's messages, each model message with its tool calls and their results);
//   - Codex CLI rollouts (JSON Lines of {"timestamp", "type", "payload"} records whose
//     response items are the conversation, or the earlier form of bare response items).
//
// adk-go's stored sessions are converted by FromEvents. Anything else is a *FormatError naming
// the file, the record and what was expected.
package trajectory
