package errkind

import (
	"errors"
	"fmt"
	"reflect"

	"google.golang.org/genai"
)

// Longest google.rpc status name and ErrorInfo reason echoed (the longest status name has 19
// bytes; reasons are at most 63).
const (
	maxStatus = 32
	maxReason = 63
)

// errorInfoType is the @type of a google.rpc.ErrorInfo entry in an API error's details.
const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// classifyModel recognizes the error the genai client returns for a non-2xx reply or an error
// chunk in a stream: a genai.APIError value (the client returns it by value; a pointer is accepted
// too). The message is "model API <code>[ <status>][ (reason <reason>)]": the status and the
// reason only when they are codes (a body that was not JSON leaves the HTTP status line in
// Status), never the provider's message or any other detail (a message may quote the request).
func classifyModel(err error) (Kind, string, bool) {
	var e genai.APIError
	var p *genai.APIError
	switch {
	case errors.As(err, &e):
	case errors.As(err, &p) && p != nil:
		e = *p
	default:
		return "", "", false
	}
	status, reason := code(e.Status, maxStatus, upperSnake), code(errorInfoReason(e.Details), maxReason, upperSnake)
	msg := fmt.Sprintf("model API %d", e.Code)
	if status != "" {
		msg += " " + status
	}
	if reason != "" {
		msg += " (reason " + reason + ")"
	}
	return modelKind(e.Code, status, reason), msg, true
}

// classifyHTTP recognizes the errors of SDKs other than genai by the HTTP status they carry in a
// typed value, never by their text: a method HTTPCode() int (gax-go's apierror.APIError, which
// every Google Cloud Go client returns; -1 for a gRPC error), an exported int field StatusCode
// (go-openai, openai-go, anthropic-sdk-go), or the Code field of google.golang.org/api's
// googleapi.Error (recognized by package path and name, not imported: the core links no provider
// SDK). A method Reason() string (apierror.APIError again: the ErrorInfo reason) adds the reason.
// The message is "HTTP <code> (<Go type>[, reason <reason>])".
func classifyHTTP(err error) (Kind, string, bool) {
	for e := range walk(err) {
		status, ok := httpStatus(e)
		if !ok {
			continue
		}
		var reason string
		if r, ok := e.(interface{ Reason() string }); ok {
			reason = code(r.Reason(), maxReason, upperSnake)
		}
		msg := fmt.Sprintf("HTTP %d (%s", status, typeName(e))
		if reason != "" {
			msg += ", reason " + reason
		}
		return modelKind(status, "", reason), msg + ")", true
	}
	return "", "", false
}

// httpStatus returns the HTTP status e carries in a typed value, if any (see classifyHTTP).
func httpStatus(e error) (int, bool) {
	valid := func(c int) (int, bool) { return c, c >= 100 && c <= 599 }
	if h, ok := e.(interface{ HTTPCode() int }); ok {
		return valid(h.HTTPCode())
	}
	v := reflect.ValueOf(e)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return 0, false
	}
	name := "StatusCode"
	if t := v.Type(); t.PkgPath() == "google.golang.org/api/googleapi" && t.Name() == "Error" {
		name = "Code"
	}
	f, ok := v.Type().FieldByName(name)
	if !ok || !f.IsExported() || !v.FieldByIndex(f.Index).CanInt() {
		return 0, false
	}
	return valid(int(v.FieldByIndex(f.Index).Int()))
}

// modelKind maps a model API error to a kind: by its google.rpc status when it has one (the JSON
// error body carries it), else by the HTTP code.
func modelKind(httpCode int, status, reason string) Kind {
	if credentialReason(reason) {
		// A bad API key is a 400 INVALID_ARGUMENT on the Gemini API; only the reason tells.
		return Auth
	}
	switch status {
	case "RESOURCE_EXHAUSTED":
		return Quota
	case "UNAUTHENTICATED", "PERMISSION_DENIED":
		return Auth
	case "NOT_FOUND":
		return NotFound
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return InvalidRequest
	case "DEADLINE_EXCEEDED":
		return Timeout
	case "CANCELLED":
		return Canceled
	case "INTERNAL", "UNAVAILABLE", "UNKNOWN", "DATA_LOSS":
		return Server
	}
	switch c := httpCode; {
	case c == 429:
		return Quota
	case c == 401 || c == 403:
		return Auth
	case c == 404:
		return NotFound
	case c == 408 || c == 504:
		return Timeout
	case c == 499:
		return Canceled
	case c >= 400 && c < 500:
		return InvalidRequest
	case c >= 500 && c < 600:
		return Server
	}
	return Unknown
}

// credentialReason reports the google.rpc.ErrorInfo reasons (google/api/error_reason.proto) that
// mean the credentials were missing or refused.
func credentialReason(reason string) bool {
	switch reason {
	case "API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "API_KEY_HTTP_REFERRER_BLOCKED",
		"API_KEY_IP_ADDRESS_BLOCKED", "API_KEY_ANDROID_APP_BLOCKED", "API_KEY_IOS_APP_BLOCKED",
		"ACCESS_TOKEN_EXPIRED", "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "ACCESS_TOKEN_TYPE_UNSUPPORTED",
		"CREDENTIALS_MISSING", "USER_PROJECT_DENIED", "CONSUMER_SUSPENDED", "CONSUMER_INVALID":
		return true
	}
	return false
}

// errorInfoReason returns the reason of the first google.rpc.ErrorInfo in details, "" if none.
func errorInfoReason(details []map[string]any) string {
	for _, d := range details {
		if t, _ := d["@type"].(string); t != errorInfoType {
			continue
		}
		if r, ok := d["reason"].(string); ok {
			return r
		}
	}
	return ""
}
