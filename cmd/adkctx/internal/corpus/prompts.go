package corpus

import "strings"

// The prompts of the shell sessions. They play the part of a SWE-bench harness's system and task
// messages (their length and layout, the protocol they set: one bash command per reply in the
// text form, the bash tool in the tool-call form, the submission sentinel); the wording is this
// package's.

const shellSystemText = `You are an assistant that works on software projects through a shell, one command at a time, over many turns.
Every reply holds exactly ONE bash code block with ONE command (several commands may be joined with && or ||).

Start each reply with a THOUGHT section that says what you are doing and why, then the command.
Use this layout:

<format_example>
THOUGHT: what you learned from the last output and what you will do next

` + "```bash" + `
the_command
` + "```" + `
</format_example>

Replies that do not follow this layout are rejected.
`

const shellSystemToolCall = `You are an assistant that works on software projects through a shell. You act by calling the bash tool.
`

// shellInstance is the first user message: the issue, then how to work on it. {{TASK}} is
// replaced by the issue.
const shellInstanceText = `<pr_description>
The following issue was reported against the repository:
{{TASK}}
</pr_description>

<instructions>
# What to do

## Goal
You are a software engineer working in a terminal. Change the repository in the current directory so that the
issue above is resolved. Change the code that is not tests; keep the change general and in the style of the code
around it. The tests that exist are right.

Work in turns: think, send ONE command, read what it printed, then decide on the next command.

In every reply:
1. A THOUGHT section: what the last output told you and what you will try now
2. Exactly ONE bash command

## Where you may write
- CHANGE: the source files under /testbed (the working directory of every command)
- LEAVE ALONE: existing tests and the build files (go.mod, go.sum, Makefile and the like)

## A way to work that usually succeeds
1. Find the code involved: list directories, grep for names, read the relevant files
2. Reproduce the problem with a small test or program of your own
3. Change the source code to fix it
4. Run your reproduction again and check that it passes
5. Run the package's tests and think about the cases around the one reported

## How commands run
1. You send one command
2. It runs in a fresh subshell
3. You see its exit status and what it printed
4. You send the next command

Format your replies like this:

<format_example>
THOUGHT: The failing test calls ParseRange, so I will look for its definition before reading it.

` + "```bash" + `
grep -rn "func ParseRange" --include=*.go .
` + "```" + `
</format_example>

**RULES THAT MATTER:**
- Each reply SHOULD start with a THOUGHT section
- Each reply MUST hold EXACTLY ONE bash code block
- That block MUST hold ONE command (or commands joined with && or ||)
- A reply with no code block, or with more than one, FAILS
- Do not split independent commands over several blocks of one reply
- A cd or an exported variable does not carry over to the next command: every command starts again in /testbed
- Prefix a command when it needs a setting, e.g. ` + "`cd pkg && GOFLAGS=-v go build`" + `, or keep settings in a file

A good reply:
<example_response>
THOUGHT: I do not know the layout of this repository yet. Listing the top directory shows where the code and the tests are.

` + "```bash" + `
ls -la
` + "```" + `
</example_response>

A reply that fails (two blocks):
<example_response>
THOUGHT: I will list the directory and then print a file.

` + "```bash" + `
ls -la
` + "```" + `

Then the file:

` + "```bash" + `
cat main.go
` + "```" + `
</example_response>

To run several commands, either join them in one block:
` + "```bash" + `
first_command && second_command || echo "something failed"
` + "```" + `
or send the first, read its output, and send the next one in your next reply.

## The machine
- A full Linux shell with the Go toolchain, git and the usual tools; no network
- Give non-interactive flags (-y, -f) to commands that would ask
- Do not start editors or pagers (vi, nano, less) or anything else that waits for input

## Commands that help

### Create a file:
` + "```bash" + `
cat <<'EOF' > scratch_test.go
package demo

import "testing"

func TestScratch(t *testing.T) { t.Log("hello") }
EOF
` + "```" + `

### Edit a file in place with sed:
` + "```bash" + `
# every occurrence
sed -i 's/oldName/newName/g' file.go

# the first occurrence on each line
sed -i 's/oldName/newName/' file.go

# only on line 12
sed -i '12s/oldName/newName/' file.go

# only on lines 1 to 40
sed -i '1,40s/oldName/newName/g' file.go
` + "```" + `

### Read part of a file with line numbers:
` + "```bash" + `
nl -ba file.go | sed -n '40,80p'
` + "```" + `

### Anything else:
` + "```bash" + `
go test -run TestName ./pkg/
` + "```" + `

## Submitting
When the work is done (read, changed, tested) or you cannot get further, send exactly this command:

` + "```bash" + `
echo ` + submitSentinel + ` && git add -A && git diff --cached
` + "```" + `

It submits your change. After it you cannot read, change or test anything for this task.
</instructions>`

const shellInstanceToolCall = `<pr_description>
The following issue was reported against the repository:
{{TASK}}
</pr_description>

<instructions>
# What to do

## Goal
You are a software engineer working in a terminal. Change the repository in the current directory so that the
issue above is resolved. Change the code that is not tests; keep the change general and in the style of the code
around it. The tests that exist are right.
<IMPORTANT>Work in turns: think, call the bash tool at least once, read what it printed, then decide what to run next.</IMPORTANT>

In every reply:
1. A few sentences: what the last output told you and what you will try now
2. One or more calls of the bash tool

## Where you may write
- CHANGE: the source files under /testbed (the working directory of every command)
- LEAVE ALONE: existing tests and the build files (go.mod, go.sum, Makefile and the like)

## A way to work that usually succeeds
1. Find the code involved: list directories, grep for names, read the relevant files
2. Reproduce the problem with a small test or program of your own
3. Change the source code to fix it
4. Run your reproduction again and check that it passes
5. Run the package's tests and think about the cases around the one reported

## How commands run
1. You call the bash tool with {"command": "..."}
2. Each command runs in a fresh subshell: a cd or an exported variable does not carry over
3. You see its exit status and what it printed
4. Calls in one reply that do not depend on each other may be sent together (reading two files, two greps)

## The machine
- A full Linux shell with the Go toolchain, git and the usual tools; no network
- Give non-interactive flags (-y, -f) to commands that would ask
- Do not start editors or pagers (vi, nano, less) or anything else that waits for input

## Submitting
When the work is done, submit your change as a patch, in three separate commands:

Step 1: write the patch of the source files you changed, and only those:
` + "`git diff -- path/to/file1 path/to/file2 > patch.txt`" + `. Do not commit.

Step 2: read patch.txt and check that it holds only the change you mean, with ` + "`--- a/` and `+++ b/`" + ` headers.
Leave out your reproduction files, scratch files and anything generated.

Step 3: submit with exactly this command:

` + "```bash" + `
echo ` + submitSentinel + ` && cat patch.txt
` + "```" + `

After it you cannot read, change or test anything for this task.
</instructions>`

func instanceMessage(format, task string) string {
	t := shellInstanceText
	if format == FormatToolCall {
		t = shellInstanceToolCall
	}
	return strings.Replace(t, "{{TASK}}", task, 1)
}
