package request

import (
	"fmt"

	"google.golang.org/genai"
)

// validPairs checks the invariant Normalize establishes: no nil contents; every content with
// calls is followed by a content with exactly one response per call, in call order (same name;
// same ID, or a blank response ID); every response is in such a content.
func nzValidPairs(cs []*genai.Content) error {
	for i, c := range cs {
		if c == nil {
			return fmt.Errorf("content %d is nil", i)
		}
		var calls []*genai.FunctionCall
		for _, p := range c.Parts {
			if p != nil && p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall)
			}
		}
		nCalls, nResps := countFunctionParts(c)
		if nCalls > 0 && nResps > 0 {
			return fmt.Errorf("content %d mixes calls and responses", i)
		}
		if nResps > 0 {
			if i == 0 {
				return fmt.Errorf("content %d: responses with no preceding calls", i)
			}
			if pc, _ := countFunctionParts(cs[i-1]); pc == 0 {
				return fmt.Errorf("content %d: responses with no preceding calls", i)
			}
		}
		if len(calls) == 0 {
			continue
		}
		if i+1 >= len(cs) {
			return fmt.Errorf("content %d: calls at the end without responses", i)
		}
		var resps []*genai.FunctionResponse
		for _, p := range cs[i+1].Parts {
			if p == nil {
				return fmt.Errorf("content %d: nil part in response content", i+1)
			}
			if p.FunctionResponse != nil {
				resps = append(resps, p.FunctionResponse)
			}
		}
		if len(resps) != len(calls) {
			return fmt.Errorf("content %d: %d calls, %d responses", i, len(calls), len(resps))
		}
		for j := range calls {
			if resps[j].Name != calls[j].Name || (resps[j].ID != calls[j].ID && resps[j].ID != "") {
				return fmt.Errorf("content %d: response %d (%q/%q) does not answer call (%q/%q)",
					i+1, j, resps[j].ID, resps[j].Name, calls[j].ID, calls[j].Name)
			}
		}
	}
	return nil
}
