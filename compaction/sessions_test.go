package compaction

import (
	"fmt"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/fixtures"
)

// shellEvents are the session's events in one invocation: the task, then per step the agent's
// thought with its bash call and the tool's result.
func shellEvents(inv string, task string, steps []fixtures.ShellStep) []Event {
	events := []Event{userEv(inv+"-u", inv, task)}
	for k, s := range steps {
		id := fmt.Sprintf("%s-%02d", inv, k)
		call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: fmt.Sprintf("THOUGHT: step %d.", k)},
			{FunctionCall: &genai.FunctionCall{ID: id, Name: "bash", Args: map[string]any{"command": s.Command}}},
		}}
		events = append(events,
			Event{ID: id + "c", InvocationID: inv, Author: "agent", Content: call},
			respEv(id+"r", inv, id, "bash", map[string]any{"output": s.Observation()}))
	}
	return events
}

// serviceEvents are the session's events: the user's first message, the first five calls, an
// answer; the second message, the rest, an answer. Results travel as adk-go's function
// responses: {"result": <the tool's JSON text>}.
func serviceEvents(user []string, calls []fixtures.ServiceCall) []Event {
	var events []Event
	add := func(inv string, k int, c fixtures.ServiceCall) {
		id := fmt.Sprintf("%s-%02d", inv, k)
		events = append(events, callEv(id+"c", inv, id, c.Name, c.Args), respEv(id+"r", inv, id, c.Name, map[string]any{"result": c.Result}))
	}
	events = append(events, userEv("s1-u", "s1", user[0]))
	for k, c := range calls[:5] {
		add("s1", k, c)
	}
	events = append(events, modelEv("s1-m", "s1", "I found direct flights from JFK to Seattle on May 20: HAT069, HAT083 and HAT251."))
	events = append(events, userEv("s2-u", "s2", user[1]))
	for k, c := range calls[5:] {
		add("s2", k+5, c)
	}
	return append(events, modelEv("s2-m", "s2", "Booked reservation Q69X3R on HAT069 and cancelled NO6JO3."))
}
