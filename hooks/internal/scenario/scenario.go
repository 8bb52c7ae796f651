// Package scenario is the scripted coding session the figure tests of both adk-go glues run (and
// the example's demo reuses): in each invocation the user asks about one module, the model reads
// a file, lists a folder (every tenth turn also runs the tests, which fail) and answers with a
// decision. Planted facts — user instructions at turns 2, 17 and 60, unique identifiers in file
// contents and test failures, the model's decisions — let a figure check what the model still
// sees. It depends on genai only, so v1 and v2 drive the same session.
package scenario

import (
	"fmt"
	"hash/fnv"
	"os"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// Invocations is the length of the session the figures run.
const Invocations = 200

// Quick reports whether the figures run asked for the quick figures ($ADKCTX_FIGURES=quick): the
// continuity and instruction rows at 32K only, compared with the plain session without adkctx,
// and no recall figure. make test asks it of the v2 glue, whose rows each repeat one of the v1
// glue's through adk-go v2's runner (all of them cost make test three CPU-minutes); make figures
// plays every row of both.
func Quick() bool { return os.Getenv("ADKCTX_FIGURES") == "quick" }

// Instructions are the standing rules the user gives, by turn.
var Instructions = map[int]string{
	2:  "never touch anything under vendor/",
	17: "use port 8443 for the dev server",
	60: "always run go vet before you commit",
}

// Session is what the user says in a variant of the session: the message of each turn (it must
// start with "[step i]", which the scripted model follows) and the standing rules planted in the
// messages, by turn, which every later request must show (raw or in the summary).
type Session struct {
	Message      func(i int) string
	Instructions map[int]string
	// Rereads: the model also reads the review checklist every other turn and runs the tests
	// every fifth (see Rereads).
	Rereads bool
}

// Default is the session of the figures: UserMessage and Instructions.
func Default() Session { return Session{Message: UserMessage, Instructions: Instructions} }

// Tool names.
const (
	ReadFile  = "read_file"
	ListFiles = "list_files"
	RunTests  = "run_tests"
)

// UserMessage is the user's message of turn i.
func UserMessage(i int) string {
	msg := fmt.Sprintf("[step %d] Look at %s and tell me what it does and whether it is safe to change.", i, Path(i))
	if rule, ok := Instructions[i]; ok {
		msg += " From now on: " + rule + "."
	}
	return msg
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// Path is the file turn i reads: 40 modules, so files are read again as the session goes on.
func Path(i int) string { return fmt.Sprintf("internal/mod%02d/service.go", i%40) }

// Dir is the folder turn i lists.
func Dir(i int) string { return fmt.Sprintf("internal/mod%02d", i%40) }

// Identifier is the unique identifier planted in the file of turn i (in its head and its tail).
func Identifier(i int) string { return fmt.Sprintf("IDENT_%d_%05d", i%40, hash(Path(i))%100000) }

// FailureCode is the unique code in the failing test output of turn i.
func FailureCode(i int) string { return fmt.Sprintf("E%d-%04d", i, hash(strconv.Itoa(i))%10000) }

// Decision is the decision the model states at turn i.
func Decision(i int) string { return fmt.Sprintf("D-%d", i) }

// FileContent is what read_file returns for path: Go-like source of 8–40 KB, the identifier in its
// first and last lines.
func FileContent(path string) string {
	h := hash(path)
	size := 8<<10 + int(h%(32<<10))
	i := 0
	fmt.Sscanf(path, "internal/mod%02d/", &i)
	id := Identifier(i)
	var b strings.Builder
	fmt.Fprintf(&b, "// Package mod%02d implements %s.\npackage mod%02d\n\n", i, id, i)
	for n := 0; b.Len() < size; n++ {
		fmt.Fprintf(&b, "func handler%03d(ctx context.Context, req *Request) (*Response, error) {\n\tif err := validate(req); err != nil {\n\t\treturn nil, fmt.Errorf(\"handler%03d: %%w\", err)\n\t}\n\treturn process(ctx, req, %d)\n}\n\n", n, n, n*7)
	}
	fmt.Fprintf(&b, "// %s: end of file.\n", id)
	return b.String()
}

// Listing is what list_files returns for dir: 2–6 KB.
func Listing(dir string) string {
	h := hash(dir)
	var b strings.Builder
	for n := 0; n < 40+int(h%80); n++ {
		fmt.Fprintf(&b, "-rw-r--r--  1 dev dev %6d Nov 22 03:%02d %s/file_%03d.go\n", 1000+n*37, n%60, dir, n)
	}
	return b.String()
}

// TestOutput is what run_tests returns at turn i: ~20 KB of passing tests, then the failure.
func TestOutput(i int) map[string]any {
	var b strings.Builder
	for n := 0; b.Len() < 20<<10; n++ {
		fmt.Fprintf(&b, "=== RUN   TestHandler%03d\n--- PASS: TestHandler%03d (0.00s)\n", n, n)
	}
	fmt.Fprintf(&b, "--- FAIL: TestService (0.01s)\n    service_test.go:88: status %s: want 200\nFAIL\n", FailureCode(i))
	return map[string]any{"output": b.String(), "exit_code": 1.0}
}

// Run answers a tool call of the session (of the Rereads session through a Workspace).
func Run(name string, args map[string]any) map[string]any {
	s, _ := args["path"].(string)
	switch name {
	case ReadFile:
		return map[string]any{"content": FileContent(s)}
	case ListFiles:
		return map[string]any{"output": Listing(s)}
	case RunTests:
		i, _ := strconv.Atoi(strings.TrimPrefix(s, "step-"))
		return TestOutput(i)
	}
	return map[string]any{"error": "unknown tool " + name}
}

var stepRE = regexp.MustCompile(`^\[step (\d+)\]`)

// Reply is the scripted model of the Default session (see Session.Reply).
func Reply(contents []*genai.Content) *genai.Content { return Default().Reply(contents) }

// Reply is the scripted model: from the request's contents it decides the next step of the
// current turn (read the file, list the folder, run the tests every tenth turn, answer; with
// Rereads, read the checklist every other turn and run the tests every fifth instead).
func (s Session) Reply(contents []*genai.Content) *genai.Content {
	k, step := -1, -1
	for j := len(contents) - 1; j >= 0; j-- {
		c := contents[j]
		if c == nil || c.Role != genai.RoleUser || len(c.Parts) == 0 || c.Parts[0] == nil {
			continue
		}
		if m := stepRE.FindStringSubmatch(c.Parts[0].Text); m != nil {
			k = j
			step, _ = strconv.Atoi(m[1])
			break
		}
	}
	if k < 0 {
		return genai.NewContentFromText("ok", genai.RoleModel)
	}
	calls := 0
	for _, c := range contents[k+1:] {
		for _, p := range c.Parts {
			if p != nil && p.FunctionCall != nil {
				calls++
			}
		}
	}
	call := func(name, path string) *genai.Content {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: map[string]any{"path": path}}}}}
	}
	steps := []*genai.Content{call(ReadFile, Path(step)), call(ListFiles, Dir(step))}
	switch {
	case s.Rereads && step%2 == 1:
		steps = append(steps, call(ReadFile, ChecklistPath))
	}
	switch {
	case s.Rereads && step%5 == 2, !s.Rereads && step%10 == 7:
		steps = append(steps, call(RunTests, fmt.Sprintf("step-%d", step)))
	}
	if calls < len(steps) {
		return steps[calls]
	}
	answer := fmt.Sprintf("Decision %s: %s is built around %s; its handlers validate and delegate to process(). "+
		"It is safe to change if the callers in %s are updated together. %s",
		Decision(step), Path(step), Identifier(step), Dir(step), strings.Repeat("I checked the error paths and the tests. ", 4))
	return genai.NewContentFromText(answer, genai.RoleModel)
}
