package errkind_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/errkind"
)

// secret stands for text that came from a provider, a tool, a row or a prompt: no message may
// carry it.
const secret = "my key is sk-live-51HxQ2eZvKYlo2C"

type classified struct {
	Kind errkind.Kind
	Msg  string
}

func of(err error) classified {
	k, m := errkind.Of(err)
	return classified{k, m}
}

// budgetError stands for adkctx's own typed errors.
type budgetError struct{ need, have int }

func (e *budgetError) Error() string     { return fmt.Sprintf("needs %d tokens, %d fit", e.need, e.have) }
func (e *budgetError) ErrorKind() string { return string(errkind.Budget) }

// statusCodeError has the shape of the error types of SDKs that carry the HTTP status in a field
// (go-openai, openai-go, anthropic-sdk-go).
type statusCodeError struct {
	StatusCode int
	Body       string
}

func (e *statusCodeError) Error() string { return fmt.Sprintf("%d: %s", e.StatusCode, e.Body) }

// httpCodeError has the shape of gax-go's apierror.APIError (every Google Cloud Go client):
// HTTPCode and Reason methods.
type httpCodeError struct {
	code           int
	reason, detail string
}

func (e *httpCodeError) Error() string  { return e.detail }
func (e *httpCodeError) HTTPCode() int  { return e.code }
func (e *httpCodeError) Reason() string { return e.reason }

// sqlStateError has the shape of the PostgreSQL drivers' errors (pgconn.PgError, pq.Error).
type sqlStateError struct{ code, message string }

func (e *sqlStateError) Error() string    { return e.message }
func (e *sqlStateError) SQLState() string { return e.code }

func apiError(code int, status string) genai.APIError {
	return genai.APIError{Code: code, Status: status, Message: "Invalid value at 'contents[0].parts[0].text': " + secret,
		Details: []map[string]any{
			{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []any{map[string]any{"field": "contents", "description": secret}}},
		}}
}

func TestOf(t *testing.T) {
	withReason := apiError(400, "INVALID_ARGUMENT")
	withReason.Details = append(withReason.Details, map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
		"reason": "API_KEY_INVALID", "domain": "googleapis.com", "metadata": map[string]any{"key": secret}})
	badReason := apiError(429, "RESOURCE_EXHAUSTED")
	badReason.Details = []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": secret}}
	tests := []struct {
		name string
		err  error
		want classified
	}{
		{"nil", nil, classified{errkind.None, ""}},
		{"kinded, wrapped with text", fmt.Errorf("turn %q: %w", secret, &budgetError{9000, 8000}),
			classified{errkind.Budget, "needs 9000 tokens, 8000 fit"}},
		{"unknown", errors.New(secret), classified{errkind.Unknown, "*errors.errorString"}},
		{"unknown, wrapped", fmt.Errorf("call: %w", errors.New(secret)), classified{errkind.Unknown, "*fmt.wrapError"}},
		{"deadline", fmt.Errorf("%s: %w", secret, context.DeadlineExceeded), classified{errkind.Timeout, "deadline exceeded"}},
		{"canceled", fmt.Errorf("%s: %w", secret, context.Canceled), classified{errkind.Canceled, "canceled"}},
		{"joined: first match wins", errors.Join(errors.New(secret), context.Canceled), classified{errkind.Canceled, "canceled"}},

		// genai: code, status and ErrorInfo reason; never the message or the other details.
		{"genai 400", fmt.Errorf("failed to call model: %w", apiError(400, "INVALID_ARGUMENT")),
			classified{errkind.InvalidRequest, "model API 400 INVALID_ARGUMENT"}},
		{"genai pointer", &genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: secret},
			classified{errkind.Quota, "model API 429 RESOURCE_EXHAUSTED"}},
		{"genai reason", withReason, classified{errkind.Auth, "model API 400 INVALID_ARGUMENT (reason API_KEY_INVALID)"}},
		{"genai reason that is not a code", badReason, classified{errkind.Quota, "model API 429 RESOURCE_EXHAUSTED"}},
		{"genai status decides over code", genai.APIError{Code: 400, Status: "FAILED_PRECONDITION", Message: secret},
			classified{errkind.InvalidRequest, "model API 400 FAILED_PRECONDITION"}},
		{"genai status line of a proxy page", genai.APIError{Code: 502, Status: "502 Bad Gateway", Message: "<html>" + secret},
			classified{errkind.Server, "model API 502"}},
		{"genai status with a line break", genai.APIError{Code: 500, Status: "INTERNAL\r\nX-Injected: 1"},
			classified{errkind.Server, "model API 500"}},
		{"genai code alone", genai.APIError{Code: 418}, classified{errkind.InvalidRequest, "model API 418"}},
		{"genai no code", genai.APIError{Message: secret}, classified{errkind.Unknown, "model API 0"}},

		// Other SDKs: the HTTP status from a typed value, never from text.
		{"status field", fmt.Errorf("openai: %w", &statusCodeError{StatusCode: 429, Body: secret}),
			classified{errkind.Quota, "HTTP 429 (*errkind_test.statusCodeError)"}},
		{"status field out of range", &statusCodeError{StatusCode: 7, Body: secret},
			classified{errkind.Unknown, "*errkind_test.statusCodeError"}},
		{"HTTPCode method with reason", fmt.Errorf("vertex: %w", &httpCodeError{403, "API_KEY_INVALID", secret}),
			classified{errkind.Auth, "HTTP 403 (*errkind_test.httpCodeError, reason API_KEY_INVALID)"}},
		{"HTTPCode method, reason not a code", &httpCodeError{404, secret, secret},
			classified{errkind.NotFound, "HTTP 404 (*errkind_test.httpCodeError)"}},
		{"HTTPCode -1: a gRPC error", &httpCodeError{-1, "RATE_LIMIT_EXCEEDED", secret},
			classified{errkind.Unknown, "*errkind_test.httpCodeError"}},

		// Databases: the SQLSTATE by behaviour, whatever the driver.
		{"SQLSTATE", fmt.Errorf("save %q: %w", secret, &sqlStateError{"40001", secret}),
			classified{errkind.Conflict, "SQLSTATE 40001 (*errkind_test.sqlStateError)"}},
		{"SQLSTATE class", &sqlStateError{"08006", secret}, classified{errkind.Network, "SQLSTATE 08006 (*errkind_test.sqlStateError)"}},
		{"SQLSTATE auth", &sqlStateError{"28P01", secret}, classified{errkind.Auth, "SQLSTATE 28P01 (*errkind_test.sqlStateError)"}},
		{"SQLSTATE busy", &sqlStateError{"55P03", secret}, classified{errkind.Busy, "SQLSTATE 55P03 (*errkind_test.sqlStateError)"}},
		{"SQLSTATE canceled", &sqlStateError{"57014", secret}, classified{errkind.Canceled, "SQLSTATE 57014 (*errkind_test.sqlStateError)"}},
		{"SQLSTATE other", &sqlStateError{"23505", secret}, classified{errkind.Storage, "SQLSTATE 23505 (*errkind_test.sqlStateError)"}},
		{"SQLSTATE malformed", &sqlStateError{secret, secret}, classified{errkind.Storage, "SQLSTATE malformed (*errkind_test.sqlStateError)"}},
		{"SQLSTATE, deadline first", fmt.Errorf("%w: %w", context.DeadlineExceeded, &sqlStateError{"57014", secret}),
			classified{errkind.Timeout, "deadline exceeded"}},
		{"stale session (adk-go's fixed prefix)", fmt.Errorf("append: %w", errors.New("stale session error: last update time 1 is later than 0")),
			classified{errkind.Conflict, "stale session: the session was written after it was read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := of(tt.err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
			if strings.Contains(got.Msg, "sk-live") {
				t.Errorf("message %q carries the secret", got.Msg)
			}
		})
	}
}

// A nil pointer of a recognized type in the chain is skipped, never called.
func TestOfNilPointers(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("a: %w", (*sqlStateError)(nil)),
		fmt.Errorf("b: %w", (*httpCodeError)(nil)),
		fmt.Errorf("c: %w", (*statusCodeError)(nil)),
		fmt.Errorf("d: %w", (*genai.APIError)(nil)),
	} {
		if got := of(err); got.Kind != errkind.Unknown {
			t.Errorf("Of(%#v) = %v, want unknown", err, got)
		}
	}
}

func TestKinds(t *testing.T) {
	kinds := errkind.Kinds()
	seen := map[errkind.Kind]bool{}
	for _, k := range kinds {
		if k == errkind.None || seen[k] {
			t.Errorf("Kinds holds %q twice or the empty kind", k)
		}
		seen[k] = true
	}
	for _, k := range []errkind.Kind{errkind.Quota, errkind.Panic, errkind.Unknown, errkind.Budget} {
		if !seen[k] {
			t.Errorf("Kinds lacks %q", k)
		}
	}
	kinds[0] = "changed"
	if errkind.Kinds()[0] == "changed" {
		t.Error("Kinds returns a shared slice")
	}
}
