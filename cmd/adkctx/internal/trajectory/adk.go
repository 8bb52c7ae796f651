package trajectory

import (
	"encoding/json"
	"fmt"

	"google.golang.org/adk/session"
)

// markerKey is the CustomMetadata key of adkctx's compaction markers (and adk-python's record):
// markers are not conversation, and the original events they cover are all still stored.
const markerKey = "_adk_compaction"

// FromEvents converts a stored adk-go session's events into a Session: messages authored
// "user" are turns, the agents' model replies (text, function calls; thoughts left out) are
// steps, and function responses answer the calls of the reply before them by id. Partial
// events, events without content and compaction markers are left out. id names the session
// (app/user/session); source locates it in errors.
func FromEvents(source, id string, events []*session.Event) (*Session, error) {
	b := newBuilder(source, id, ADKSession)
	markers := 0
	for i, ev := range events {
		record := fmt.Sprintf("event %d (id %s)", i, ev.ID)
		if _, ok := ev.CustomMetadata[markerKey]; ok {
			markers++
			continue
		}
		if ev.Partial || ev.Content == nil {
			continue
		}
		var text string
		var calls []Call
		var outputs []*genaiResponse
		for _, p := range ev.Content.Parts {
			switch {
			case p == nil || p.Thought:
			case p.FunctionCall != nil:
				calls = append(calls, Call{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: copyMap(p.FunctionCall.Args)})
			case p.FunctionResponse != nil:
				outputs = append(outputs, &genaiResponse{id: p.FunctionResponse.ID, name: p.FunctionResponse.Name, response: p.FunctionResponse.Response})
			case p.Text != "":
				text = joinLine(text, p.Text)
			case p.ExecutableCode != nil || p.CodeExecutionResult != nil:
				// The provider ran it: kept as the model's text, as the genai reader keeps it.
				b.executed++
				if p.ExecutableCode != nil {
					text = joinLine(text, p.ExecutableCode.Code)
				} else {
					text = joinLine(text, p.CodeExecutionResult.Output)
				}
			case p.InlineData != nil || p.FileData != nil:
				text = joinLine(text, "[image]")
			}
		}
		switch {
		case len(outputs) > 0:
			for _, o := range outputs {
				out, _ := json.Marshal(o.response)
				resp := copyMap(o.response)
				if resp == nil {
					resp = map[string]any{}
				}
				if err := b.output(record, o.id, o.name, string(out), resp); err != nil {
					return nil, err
				}
			}
		case ev.Author == "user":
			if text != "" {
				b.user(text, Person)
			}
		case text != "" || len(calls) > 0:
			b.reply(text, calls)
		}
	}
	b.s.noteCount(markers, "%d compaction markers left out (the events they cover are replayed)")
	return b.finish(), nil
}

// joinLine adds line to text on a line of its own; an empty line adds nothing.
func joinLine(text, line string) string {
	switch {
	case line == "":
		return text
	case text == "":
		return line
	}
	return text + "\n" + line
}

type genaiResponse struct {
	id, name string
	response map[string]any
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	// Through JSON: the values of a stored event are JSON values (the database service stores
	// them as JSON), and numbers stay exact.
	b, err := json.Marshal(m)
	if err != nil {
		return map[string]any{"arguments": fmt.Sprint(m)}
	}
	out, ok := decodeObject(b)
	if !ok {
		return map[string]any{}
	}
	return out
}
