package geminitest

import (
	"fmt"
	"net/http"

	"google.golang.org/genai"
)

// Reply is what the fake answers to one request. Exactly one of the failure fields (Err, Raw,
// Hangup, Stall) may be set; with none, the reply is a model turn made of Parts.
type Reply struct {
	// Parts of the model's content (role "model"). None: an empty turn.
	Parts []*genai.Part
	// FinishReason of the candidate. Default STOP.
	FinishReason genai.FinishReason
	// BlockReason, when set, answers with promptFeedback.blockReason and no candidate, as the
	// service does for a blocked prompt.
	BlockReason genai.BlockedReason
	// Usage overrides the reported usage. Default: promptTokenCount from Options.PromptTokens,
	// candidatesTokenCount and thoughtsTokenCount ⌈bytes ÷ 4⌉ of the non-thought and thought
	// parts, totalTokenCount their sum.
	Usage *genai.GenerateContentResponseUsageMetadata
	// ModelVersion and ResponseID of the response. Defaults: the requested model, "fake-<n>".
	ModelVersion, ResponseID string
	// Chunks is how many stream events each text part is split across (streaming only). Default 3;
	// a part never splits into pieces smaller than one character.
	Chunks int
	// StreamErr, streaming only: after the content events, the stream ends with this error chunk
	// instead of the final event (a failure after the reply started).
	StreamErr *genai.APIError

	// Err answers with this Google API error: a JSON error body with HTTP status Err.Code.
	Err *genai.APIError
	// Raw answers with a non-JSON body, as a proxy in front of the service might.
	Raw *RawReply
	// Hangup resets the connection without answering.
	Hangup bool
	// Stall sends nothing until the client gives up (its deadline or cancellation) or the server
	// closes.
	Stall bool
}

// RawReply is a reply that is not the service's JSON.
type RawReply struct {
	Status      int
	ContentType string
	Body        string
}

func (r *Reply) validate() error {
	n := 0
	for _, set := range []bool{r.Err != nil, r.Raw != nil, r.Hangup, r.Stall} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("more than one of Err, Raw, Hangup, Stall set")
	case n == 1 && (len(r.Parts) > 0 || r.StreamErr != nil):
		return fmt.Errorf("a failure reply with Parts or StreamErr")
	case r.Err != nil && (r.Err.Code < 400 || r.Err.Code > 599):
		return fmt.Errorf("Err.Code %d is not an HTTP error status", r.Err.Code)
	case r.Raw != nil && (r.Raw.Status < 100 || r.Raw.Status > 599):
		return fmt.Errorf("Raw.Status %d is not an HTTP status", r.Raw.Status)
	case r.Chunks < 0:
		return fmt.Errorf("negative Chunks")
	}
	return nil
}

// Text returns a reply with one text part.
func Text(s string) *Reply {
	return &Reply{Parts: []*genai.Part{{Text: s}}}
}

// Calls returns a reply calling the given functions (in parallel when several).
func Calls(calls ...*genai.FunctionCall) *Reply {
	r := &Reply{}
	for _, c := range calls {
		cp := *c
		r.Parts = append(r.Parts, &genai.Part{FunctionCall: &cp})
	}
	return r
}

// Fail returns a reply with the Google API error the service sends for the HTTP status code:
// its canonical status and a message like the service's (see APIError).
func Fail(code int) *Reply {
	return &Reply{Err: APIError(code)}
}

// APIError returns the error the Gemini API answers with for an HTTP status code: the canonical
// google.rpc status and a message modelled on the service's, with the details it attaches (a
// RetryInfo for 429).
func APIError(code int) *genai.APIError {
	e := &genai.APIError{Code: code, Status: canonicalStatus(code)}
	switch code {
	case http.StatusBadRequest:
		e.Message = "Request contains an invalid argument."
	case http.StatusUnauthorized:
		e.Message = "Request had invalid authentication credentials. Expected OAuth 2 access token, " +
			"login cookie or other valid authentication credential."
	case http.StatusForbidden:
		e.Message = "The caller does not have permission"
	case http.StatusNotFound:
		e.Message = "Requested entity was not found."
	case http.StatusTooManyRequests:
		e.Message = "You exceeded your current quota, please check your plan and billing details. " +
			"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
		e.Details = []map[string]any{{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": "23s",
		}}
	case 499:
		e.Message = "The operation was cancelled."
	case http.StatusInternalServerError:
		e.Message = "An internal error has occurred. Please retry or report in " +
			"https://developers.generativeai.google/guide/troubleshooting"
	case http.StatusServiceUnavailable:
		e.Message = "The model is overloaded. Please try again later."
	case http.StatusGatewayTimeout:
		e.Message = "Deadline expired before operation could complete."
	default:
		e.Message = http.StatusText(code)
	}
	return e
}

// canonicalStatus is the google.rpc.Code name the service pairs with an HTTP status.
func canonicalStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "ABORTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case http.StatusInternalServerError:
		return "INTERNAL"
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "UNKNOWN"
}

// The errors the fake itself answers with, as the service words them.

func errMissingKey() *genai.APIError {
	return &genai.APIError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED",
		Message: "Method doesn't allow unregistered callers (callers without established identity). " +
			"Please use API Key or other form of API consumer identity to call this API."}
}

func errInvalidKey() *genai.APIError {
	const msg = "API key not valid. Please pass a valid API key."
	return &genai.APIError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: msg,
		Details: []map[string]any{
			{
				"@type":    "type.googleapis.com/google.rpc.ErrorInfo",
				"reason":   "API_KEY_INVALID",
				"domain":   "googleapis.com",
				"metadata": map[string]any{"service": "generativelanguage.googleapis.com"},
			},
			{"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": msg},
		}}
}

func errUnknownModel(model, method string) *genai.APIError {
	return &genai.APIError{Code: http.StatusNotFound, Status: "NOT_FOUND",
		Message: fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for %s. "+
			"Call ListModels to see the list of available models and their supported methods.", model, method)}
}

func errNoSuchMethod(path string) *genai.APIError {
	return &genai.APIError{Code: http.StatusNotFound, Status: "NOT_FOUND",
		Message: fmt.Sprintf("The requested URL %s was not found on this server.", path)}
}

func errInvalidArgument(format string, args ...any) *genai.APIError {
	return &genai.APIError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: fmt.Sprintf(format, args...)}
}
