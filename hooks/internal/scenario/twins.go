package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// The twin runs: a session in which the user asks, turn after turn, to run the tests; turn k's
// run passes when k is even and fails when it is odd, and every run's output has the same length
// and the same first and last 300 bytes (TwinRun). The glues' tests drive it through adk-go's
// runners with an LLM summarizer on the agent's model: a content print that looked at a text's
// length and edges took each run for the one before, and the summarizer was shown the first
// run's output for every turn.

// TwinMessage is the user's message of turn k.
func TwinMessage(k int) string {
	return fmt.Sprintf("turn-%d: run the tests and tell me the result", k)
}

// TwinRun is what run_tests returns at turn k.
func TwinRun(k int) map[string]any {
	edge := strings.Repeat("=== RUN   TestHandler\n--- PASS: TestHandler (0.00s)\n", 6)
	result := "--- PASS: TestService (0.01s)\n"
	if k%2 == 1 {
		result = "--- FAIL: TestService (0.01s)\n"
	}
	return map[string]any{"output": edge + result + edge, "exit_code": 0.0}
}

var twinTurnRE = regexp.MustCompile(`^turn-(\d+): `)

// TwinRunsProblem says how the run outputs contents show differ from their turns' (each output
// belongs to the turn of the user message before it): "" when none does.
func TwinRunsProblem(contents []*genai.Content) string {
	turn := -1
	for _, c := range contents {
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if m := twinTurnRE.FindStringSubmatch(p.Text); m != nil && c.Role == genai.RoleUser {
				turn, _ = strconv.Atoi(m[1])
			}
			if fr := p.FunctionResponse; fr != nil && fr.Name == RunTests && turn >= 0 {
				if got, want := fmt.Sprint(fr.Response["output"]), TwinRun(turn)["output"]; got != want {
					return fmt.Sprintf("turn %d's run shows another run's output", turn)
				}
			}
		}
	}
	return ""
}
