package trajectory

import (
	"encoding/json"
	"fmt"
	"strings"
)

type atifStep struct {
	Source      string          `json:"source"`
	Message     json.RawMessage `json:"message"`
	ModelName   string          `json:"model_name"`
	ToolCalls   json.RawMessage `json:"tool_calls"`
	Observation *struct {
		Results []struct {
			SourceCallID *string         `json:"source_call_id"`
			Content      json.RawMessage `json:"content"`
		} `json:"results"`
	} `json:"observation"`
}

type atifToolCall struct {
	ToolCallID   string          `json:"tool_call_id"`
	FunctionName string          `json:"function_name"`
	Arguments    json.RawMessage `json:"arguments"`
}

// readATIF reads an Agent Trajectory Interchange Format trajectory (Harbor): system, user and
// agent steps; an agent step's tool_calls are answered by its observation's results, by
// source_call_id, or in order when the results carry none. Results that answer no call (an
// action without tool calling, a system step's observation) reach the agent as a message of its
// environment.
func readATIF(name string, top map[string]json.RawMessage) (*Session, error) {
	var steps []json.RawMessage
	if err := json.Unmarshal(top["steps"], &steps); err != nil {
		return nil, errorf(name, "steps", "an array of steps", kindOf(top["steps"]))
	}
	var agent struct {
		ModelName string `json:"model_name"`
	}
	json.Unmarshal(top["agent"], &agent) // optional for the replay
	b := newBuilder(name, name, ATIF)
	b.s.Model = agent.ModelName
	systemObs := 0
	for i, raw := range steps {
		record := fmt.Sprintf("steps[%d]", i)
		var st atifStep
		if err := json.Unmarshal(raw, &st); err != nil {
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				return nil, errorf(name, record, "a step object", kindOf(raw))
			}
			return nil, syntaxError(name, record, err)
		}
		text, err := textOf(name, record+".message", st.Message)
		if err != nil {
			return nil, err
		}
		switch st.Source {
		case "system":
			b.system(text)
			if st.Observation != nil && len(st.Observation.Results) > 0 {
				systemObs++
			}
		case "user":
			b.user(text, Person)
		case "agent":
			if b.s.Model == "" {
				b.s.Model = st.ModelName
			}
			var tcs []json.RawMessage
			if len(st.ToolCalls) > 0 && string(st.ToolCalls) != "null" {
				if err := json.Unmarshal(st.ToolCalls, &tcs); err != nil {
					return nil, errorf(name, record+".tool_calls", "an array of tool calls", kindOf(st.ToolCalls))
				}
			}
			calls := make([]Call, 0, len(tcs))
			for j, traw := range tcs {
				rec := fmt.Sprintf("%s.tool_calls[%d]", record, j)
				var tc atifToolCall
				if err := json.Unmarshal(traw, &tc); err != nil {
					return nil, errorf(name, rec, `a tool call {"tool_call_id", "function_name", "arguments"}`, kindOf(traw))
				}
				if tc.FunctionName == "" {
					return nil, errorf(name, rec+".function_name", "the called function's name", "none")
				}
				calls = append(calls, Call{ID: tc.ToolCallID, Name: tc.FunctionName, Args: b.args(tc.Arguments)})
			}
			b.reply(text, calls)
			if st.Observation == nil {
				continue
			}
			var loose []string
			for j, r := range st.Observation.Results {
				rec := fmt.Sprintf("%s.observation.results[%d]", record, j)
				content, err := textOf(name, rec+".content", r.Content)
				if err != nil {
					return nil, err
				}
				if r.SourceCallID == nil || *r.SourceCallID == "" {
					loose = append(loose, content)
					continue
				}
				if err := b.output(rec, *r.SourceCallID, "", content, nil); err != nil {
					return nil, err
				}
			}
			// Results without a call id answer the calls still waiting, in order; the rest is
			// the environment's message to the agent.
			for len(loose) > 0 && b.open != nil && b.waiting() {
				if err := b.output(record+".observation", "", "", loose[0], nil); err != nil {
					return nil, err
				}
				loose = loose[1:]
			}
			if len(loose) > 0 {
				b.user(strings.Join(loose, "\n\n"), Environment)
			}
		default:
			return nil, errorf(name, record+".source", `"system", "user" or "agent"`, brief(st.Source))
		}
	}
	if systemObs > 0 {
		b.s.Notes = append(b.s.Notes, fmt.Sprintf("%d observations of system steps (never sent to the model) left out", systemObs))
	}
	return b.finish(), nil
}

// waiting reports whether the newest reply has a call without an output.
func (b *builder) waiting() bool {
	for _, c := range b.open.Calls {
		if !c.Recorded {
			return true
		}
	}
	return false
}
