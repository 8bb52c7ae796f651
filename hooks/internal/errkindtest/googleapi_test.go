package errkindtest_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
)

// googleSecret is conversation text a Google API error body quotes.
const googleSecret = "my key is sk-live-4eC39HqLyjWDarjtT1zdp7dc"

// googleAPIBody is a Google API error body: a status, a message quoting the request, and details.
func googleAPIBody(code int, status, reason string) string {
	return fmt.Sprintf(`{"error": {"code": %d, "status": %q, "message": "Invalid value at 'contents[0].parts[0].text': %s",
		"details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": %q, "domain": "googleapis.com",
		             "metadata": {"quoted": %q}}]}}`, code, status, googleSecret, reason, googleSecret)
}

// checkResponse is the error googleapi.CheckResponse (what every generated client of
// google.golang.org/api calls) returns for a reply with code and body.
func checkResponse(t *testing.T, code int, body string) error {
	t.Helper()
	rec := httptest.NewRecorder()
	rec.WriteHeader(code)
	rec.WriteString(body)
	err := googleapi.CheckResponse(rec.Result())
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || !strings.Contains(err.Error(), "googleapi: ") {
		t.Fatalf("CheckResponse = %v (%T), want a *googleapi.Error", err, err)
	}
	return err
}

// Models that do not use genai: a googleapi.Error wrapped with fmt.Errorf, and gax-go's
// apierror.APIError (Google Cloud Go clients), classified by the HTTP status they carry in typed
// values, never from their text.
func TestGoogleAPIErrors(t *testing.T) {
	quota := checkResponse(t, http.StatusTooManyRequests, googleAPIBody(429, "RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED"))
	badKey := checkResponse(t, http.StatusBadRequest, googleAPIBody(400, "INVALID_ARGUMENT", "API_KEY_INVALID"))
	gaxQuota, ok := apierror.FromError(quota)
	if !ok {
		t.Fatal("apierror.FromError: not an API error")
	}
	gaxBadKey, _ := apierror.FromError(badKey)
	tests := []struct {
		name string
		err  error
		want classified
	}{
		{"googleapi 429, wrapped", fmt.Errorf("model call: %w", quota), classified{"quota", "HTTP 429 (*googleapi.Error)"}},
		{"googleapi without a JSON body", checkResponse(t, http.StatusBadGateway, "<html>"+googleSecret+"</html>"),
			classified{"server", "HTTP 502 (*googleapi.Error)"}},
		{"googleapi 503 without a status", checkResponse(t, http.StatusServiceUnavailable, `{"error": {"message": "`+googleSecret+`"}}`),
			classified{"server", "HTTP 503 (*googleapi.Error)"}},
		{"apierror 429, with its reason", fmt.Errorf("vertex: %w", gaxQuota),
			classified{"quota", "HTTP 429 (*apierror.APIError, reason RATE_LIMIT_EXCEEDED)"}},
		{"apierror: a bad key is a 400 with reason API_KEY_INVALID", gaxBadKey,
			classified{"auth", "HTTP 400 (*apierror.APIError, reason API_KEY_INVALID)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(tt.err.Error(), googleSecret) && !strings.Contains(tt.name, "503") {
				t.Fatalf("the error's text %q does not quote the secret: the test proves nothing", tt.err)
			}
			got := of(tt.err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Of(%v) (-want +got):\n%s", tt.err, diff)
			}
			if strings.Contains(got.Msg, "sk-live") {
				t.Errorf("message %q quotes the error's text", got.Msg)
			}
		})
	}
}
