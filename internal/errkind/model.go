package errkind

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Caps on text from outside (a provider's reply, an address) in a message.
const (
	maxMessage = 200 // bytes of APIError.Message, and of a network error's operation and host
	maxField   = 64  // bytes of APIError.Status and of an ErrorInfo reason
)

// errorInfoType is the @type of a google.rpc.ErrorInfo entry in an API error's details.
const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// classifyModel recognizes the error the genai client returns for a non-2xx reply or an error
// chunk in a stream: a genai.APIError value (the client returns it by value; a pointer is accepted
// too).
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
	reason := errorInfoReason(e.Details)
	return modelKind(e, reason), modelMessage(e, reason), true
}

// modelKind maps an API error to a kind: by its google.rpc status when it has one (the JSON error
// body carries it), else by the HTTP code (a body that was not JSON leaves the HTTP status line in
// Status).
func modelKind(e genai.APIError, reason string) Kind {
	if credentialReason(reason) {
		// A bad API key is a 400 INVALID_ARGUMENT on the Gemini API; only the reason tells.
		return Auth
	}
	switch e.Status {
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
	switch c := e.Code; {
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

// modelMessage is "model API <code> <status>[ (reason <reason>)]: <message>", each field of the
// provider's cut to one line.
func modelMessage(e genai.APIError, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model API %d", e.Code)
	if s := oneLine(e.Status, maxField); s != "" {
		b.WriteString(" " + s)
	}
	if r := oneLine(reason, maxField); r != "" {
		b.WriteString(" (reason " + r + ")")
	}
	if m := oneLine(e.Message, maxMessage); m != "" {
		b.WriteString(": " + m)
	}
	return b.String()
}

// oneLine makes s fit one log line of at most limit bytes: invalid UTF-8 replaced, every run of
// spaces, line separators, control and format (bidi) characters turned into one space, and a
// longer result cut at a rune boundary with "…" (counted in limit).
func oneLine(s string, limit int) string {
	const ellipsis = "…"
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(min(len(s), limit+utf8.UTFMax))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() > limit {
			break
		}
	}
	out := b.String()
	if len(out) <= limit {
		return out
	}
	cut := max(limit-len(ellipsis), 0)
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	head := strings.TrimRight(out[:cut], " ")
	if head == "" {
		return ""
	}
	return head + ellipsis
}
