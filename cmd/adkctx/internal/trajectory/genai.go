package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// gaPart is a part of a genai Content as the Gemini API's JSON writes it (camelCase) or the
// Python SDK's dump does (snake_case).
type gaPart struct {
	Text                  string      `json:"text"`
	Thought               bool        `json:"thought"`
	FunctionCall          *gaCall     `json:"functionCall"`
	FunctionCallSnake     *gaCall     `json:"function_call"`
	FunctionResponse      *gaResponse `json:"functionResponse"`
	FunctionResponseSnake *gaResponse `json:"function_response"`
	InlineData            *struct{}   `json:"inlineData"`
	InlineDataSnake       *struct{}   `json:"inline_data"`
	FileData              *struct{}   `json:"fileData"`
	FileDataSnake         *struct{}   `json:"file_data"`
	// Code the model wrote for the provider's code execution, and what running it gave.
	ExecutableCode           *gaCode `json:"executableCode"`
	ExecutableCodeSnake      *gaCode `json:"executable_code"`
	CodeExecutionResult      *gaCode `json:"codeExecutionResult"`
	CodeExecutionResultSnake *gaCode `json:"code_execution_result"`
}

// gaCode is an executable code part's code or a code execution result's output.
type gaCode struct {
	Code   string `json:"code"`
	Output string `json:"output"`
}

// executed is the text of a code execution part: the code, or what running it gave; ok reports
// whether the part is one.
func (p *gaPart) executed() (text string, ok bool) {
	for _, c := range []*gaCode{p.ExecutableCode, p.ExecutableCodeSnake, p.CodeExecutionResult, p.CodeExecutionResultSnake} {
		if c != nil {
			return c.Code + c.Output, true
		}
	}
	return "", false
}

type gaCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gaResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

func (p *gaPart) call() *gaCall {
	if p.FunctionCall != nil {
		return p.FunctionCall
	}
	return p.FunctionCallSnake
}

func (p *gaPart) response() *gaResponse {
	if p.FunctionResponse != nil {
		return p.FunctionResponse
	}
	return p.FunctionResponseSnake
}

func (p *gaPart) media() bool {
	return p.InlineData != nil || p.InlineDataSnake != nil || p.FileData != nil || p.FileDataSnake != nil
}

// gaContent is a genai Content: a role ("user", "model"; "function" in the API's first form)
// and its parts.
type gaContent struct {
	Role  string   `json:"role"`
	Parts []gaPart `json:"parts"`
}

// isGenAIContent reports whether an object is a genai Content: parts, beside a role or not.
func isGenAIContent(obj map[string]json.RawMessage) bool {
	_, parts := obj["parts"]
	return parts
}

// isGenAIRequest reports whether an object is a logged Gemini API request: its "contents", or
// adk-go's model.LLMRequest in JSON ("Contents").
func isGenAIRequest(obj map[string]json.RawMessage) bool {
	_, contents := obj["contents"]
	_, goContents := obj["Contents"]
	return contents || goContents
}

// field returns the value of the first of keys obj holds, and that key.
func field(obj map[string]json.RawMessage, keys ...string) (json.RawMessage, string) {
	for _, k := range keys {
		if raw, ok := obj[k]; ok {
			return raw, k
		}
	}
	return nil, ""
}

// readGenAIRequest reads a Gemini API request as logged (a GenerateContentRequest: "contents",
// with "systemInstruction" and "tools" beside them; the Python SDK's snake_case too; or beside a
// "config" holding them, as the Python SDK's generate_content takes them, adk-python's
// LlmRequest holds them and adk-go's model.LLMRequest writes them in JSON): the history an agent
// on adk-go or the Gemini API sent.
func readGenAIRequest(name string, top map[string]json.RawMessage) (*Session, error) {
	raw, key := field(top, "contents", "Contents")
	var contents []json.RawMessage
	if err := json.Unmarshal(raw, &contents); err != nil {
		return nil, errorf(name, key, "an array of contents", kindOf(raw))
	}
	b := newBuilder(name, name, GenAIContents)
	if raw, _ := field(top, "model", "Model"); raw != nil {
		json.Unmarshal(raw, &b.s.Model)
		b.s.Model = strings.TrimPrefix(b.s.Model, "models/")
	}
	// The system instruction and the tools: beside the contents, or in the config.
	where, prefix := top, ""
	if raw, key := field(top, "config", "Config"); raw != nil && string(bytes.TrimSpace(raw)) != "null" {
		var config map[string]json.RawMessage
		if err := json.Unmarshal(raw, &config); err != nil {
			return nil, errorf(name, key, "a config object", kindOf(raw))
		}
		if _, found := field(config, "systemInstruction", "system_instruction", "tools"); found != "" {
			where, prefix = config, key+"."
		}
	}
	if raw, key := field(where, "systemInstruction", "system_instruction"); raw != nil && string(bytes.TrimSpace(raw)) != "null" {
		text, err := gaSystem(name, prefix+key, raw)
		if err != nil {
			return nil, err
		}
		b.system(text)
	}
	if raw, key := field(where, "tools"); raw != nil && string(bytes.TrimSpace(raw)) != "null" {
		if err := gaTools(b, name, prefix+key, raw); err != nil {
			return nil, err
		}
	}
	if err := readGenAI(b, key, contents); err != nil {
		return nil, err
	}
	return b.finish(), nil
}

// readGenAI reads genai contents in order: a model content one reply (its text and function
// calls; thoughts left out), a user content's function responses its calls' outputs, by id or by
// name and order, and its text after them a message to the agent.
func readGenAI(b *builder, field string, contents []json.RawMessage) error {
	for i, raw := range contents {
		record := fmt.Sprintf("%s[%d]", field, i)
		if field == "" {
			record = fmt.Sprintf("content %d", i)
		}
		var c gaContent
		if err := json.Unmarshal(raw, &c); err != nil {
			return errorf(b.file, record, `a content {"role", "parts"}`, kindOf(raw))
		}
		var texts []string
		var calls []Call
		for j := range c.Parts {
			p := &c.Parts[j]
			where := fmt.Sprintf("%s.parts[%d]", record, j)
			code, isCode := p.executed()
			switch {
			case p.call() != nil:
				fc := p.call()
				calls = append(calls, Call{ID: fc.ID, Name: fc.Name, Args: b.args(fc.Args)})
			case p.response() != nil:
				fr := p.response()
				resp, ok := decodeObject(fr.Response)
				if !ok {
					return errorf(b.file, where, `a function response {"name", "response": {...}}`, kindOf(fr.Response))
				}
				if err := b.output(where, fr.ID, fr.Name, responseText(resp), resp); err != nil {
					return err
				}
			case p.Thought:
			case p.Text != "":
				texts = append(texts, p.Text)
			case isCode:
				// The provider ran it: no call the agent's tools answer, but the code and its
				// output are the model's content, kept as the reply's text.
				b.executed++
				if code != "" {
					texts = append(texts, code)
				}
			case p.media():
				texts = append(texts, "[image]")
			}
		}
		text := strings.Join(texts, "\n")
		switch c.Role {
		case "model":
			if text != "" || len(calls) > 0 {
				b.reply(text, calls)
			}
		case "user", "function", "":
			if len(calls) > 0 {
				return errorf(b.file, record, "function calls in a model content", "function calls in a "+roleName(c.Role)+" content")
			}
			if text != "" {
				b.user(text, Person)
			}
		default:
			return errorf(b.file, record+".role", `"user" or "model"`, brief(c.Role))
		}
	}
	return nil
}

func roleName(role string) string {
	if role == "" {
		return "role-less"
	}
	return fmt.Sprintf("%q", role)
}

// responseText is a function response as text: its "output" when that is all it holds (adk-go's
// and Gemini CLI's tools return one), else its JSON.
func responseText(resp map[string]any) string {
	if out, ok := resp["output"].(string); ok && len(resp) == 1 {
		return out
	}
	b, _ := json.Marshal(resp)
	return string(b)
}

// gaSystem is a system instruction's text: a Content's text parts, or a string.
func gaSystem(name, field string, raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var c gaContent
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", errorf(name, field, `a content {"parts": [{"text"}]} or a string`, kindOf(raw))
	}
	var texts []string
	for _, p := range c.Parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// gaTools declares the function declarations of a request's tools; field names them for errors.
func gaTools(b *builder, name, field string, raw json.RawMessage) error {
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return errorf(name, field, "an array of tools", kindOf(raw))
	}
	type decl struct {
		Name                 string         `json:"name"`
		Description          string         `json:"description"`
		Parameters           map[string]any `json:"parameters"`
		ParametersJSONSchema map[string]any `json:"parametersJsonSchema"`
		ParametersSnake      map[string]any `json:"parameters_json_schema"`
	}
	for i, t := range tools {
		for _, key := range []string{"functionDeclarations", "function_declarations"} {
			raw, ok := t[key]
			if !ok {
				continue
			}
			var decls []decl
			if err := json.Unmarshal(raw, &decls); err != nil {
				return errorf(name, fmt.Sprintf("%s[%d].%s", field, i, key), `an array of function declarations {"name", "description", "parameters"}`, kindOf(raw))
			}
			for j, d := range decls {
				if d.Name == "" {
					return errorf(name, fmt.Sprintf("%s[%d].%s[%d]", field, i, key, j), "a function declaration with a name", "none")
				}
				params := d.Parameters
				if params == nil {
					params = d.ParametersJSONSchema
				}
				if params == nil {
					params = d.ParametersSnake
				}
				b.declare(Tool{Name: d.Name, Description: d.Description, Parameters: params})
			}
		}
	}
	return nil
}

// isGenAIArray reports whether the first element of an array is a genai Content (the history a
// Gemini CLI checkpoint holds, or a logged request's contents alone).
func isGenAIArray(first map[string]json.RawMessage) bool {
	if !isGenAIContent(first) {
		return false
	}
	_, content := first["content"]
	return !content && !bytes.Contains(first["role"], []byte(`"assistant"`))
}
