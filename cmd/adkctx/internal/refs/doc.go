// Package refs measures what a model's requests kept of a recorded session: the references a
// step's calls make to what the agent read earlier, the user's own facts, and the head of the
// task. It is a pure function of the recorded session (package trajectory) and the requests sent
// at its steps, so any replay — with or without adkctx, cut or compacted — is scored the same way.
//
// # Tokens
//
// Tokens splits text into runs of letters and digits (of any script) and the characters _ . / - @, trims . / -
// from both ends, and keeps a run when it is at least 4 bytes long and at most 256, holds a
// letter or digit, is not an English stop word (case-insensitive), and, when it has no letter,
// holds at least 4 digits. So paths ("src/parse.py"), dotted names ("os.path.join"),
// identifiers of 4 or more characters ("parse_line"), ids ("HAT136", "mia_li_3668",
// "2024-05-20") and numbers of 4 or more digits are tokens; "the", "if", "42" and "1.5" are not.
// Tokens compare byte for byte (case-sensitive).
//
// # References (issue "What the tools told the agent survives compaction")
//
// The references of a step are the distinct tokens of its calls' argument values
// that appeared in an earlier tool output or message to the agent but not in what the agent
// read right before the step (the outputs of the previous step's calls and, on a turn's first
// step, the turn's message). A reference is kept when the request sent at that step holds it: a
// token of the system instruction or of any content's text, call or response (tool
// declarations are not counted).
//
// # User facts
//
// The facts of a message a person wrote (trajectory.Turn.Said: of messages joined into one turn,
// only what the person wrote, not a command's output beside it) are its distinct tokens. A request
// at step k is due every fact of the person messages sent up to step k (its own turn's message
// included); a fact is kept when the request holds it as a token.
//
// # The task's head
//
// The head is the first message to the agent with its whitespace runs made single spaces, cut
// to at most 200 bytes at a word boundary. It is present in a request when one text of the
// request (the system instruction, a text part, a call or a response), whitespace made single
// spaces the same way, contains it.
package refs
