package errkindtest_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/hooks/internal/geminitest"
)

// call makes one generateContent call with the genai client configured by cc.
func call(t *testing.T, ctx context.Context, cc *genai.ClientConfig) error {
	t.Helper()
	client, err := genai.NewClient(t.Context(), cc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Models.GenerateContent(ctx, modelName, hello(), nil)
	if err == nil {
		t.Fatal("the call succeeded")
	}
	return err
}

func hostOf(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// Network failures produced for real on loopback, through the genai client where it applies.
func TestNetworkErrors(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cc := &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: "http://" + addr}}
		want := classified{"network", "Post http://" + addr + ": connection refused"}
		if diff := cmp.Diff(want, of(call(t, t.Context(), cc))); diff != "" {
			t.Errorf("Of (-want +got):\n%s", diff)
		}
	})
	t.Run("connection reset", func(t *testing.T) {
		srv := geminitest.NewServer(t, geminitest.Options{})
		srv.Enqueue(&geminitest.Reply{Hangup: true})
		want := classified{"network", "Post " + srv.URL() + ": connection reset"}
		if diff := cmp.Diff(want, of(call(t, t.Context(), srv.ClientConfig()))); diff != "" {
			t.Errorf("Of (-want +got):\n%s", diff)
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(http.NotFoundHandler())
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failure is expected
		srv.StartTLS()
		defer srv.Close()
		cc := &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
			HTTPClient: &http.Client{}}
		want := classified{"network", "Post " + srv.URL + ": tls: certificate verification failed (x509.UnknownAuthorityError)"}
		if diff := cmp.Diff(want, of(call(t, t.Context(), cc))); diff != "" {
			t.Errorf("Of (-want +got):\n%s", diff)
		}
	})
	t.Run("HTTPS client, plain HTTP server", func(t *testing.T) {
		srv := geminitest.NewServer(t, geminitest.Options{})
		cc := srv.ClientConfig()
		cc.HTTPOptions.BaseURL = strings.Replace(srv.URL(), "http://", "https://", 1)
		cc.HTTPClient = &http.Client{}
		// net/http reports this case with an untyped error: the url.Error still makes it a
		// network failure, named by the innermost type.
		want := classified{"network", "Post " + cc.HTTPOptions.BaseURL + ": *errors.errorString"}
		if diff := cmp.Diff(want, of(call(t, t.Context(), cc))); diff != "" {
			t.Errorf("Of (-want +got):\n%s", diff)
		}
	})
	t.Run("http client timeout", func(t *testing.T) {
		srv := geminitest.NewServer(t, geminitest.Options{})
		srv.Enqueue(&geminitest.Reply{Stall: true})
		cc := srv.ClientConfig()
		cc.HTTPClient = &http.Client{Timeout: 50 * time.Millisecond}
		// net/http's client timeout error matches context.DeadlineExceeded.
		want := classified{"timeout", "deadline exceeded"}
		if diff := cmp.Diff(want, of(call(t, t.Context(), cc))); diff != "" {
			t.Errorf("Of (-want +got):\n%s", diff)
		}
	})
	t.Run("read deadline", func(t *testing.T) {
		srv := geminitest.NewServer(t, geminitest.Options{})
		conn, err := net.Dial("tcp", hostOf(t, srv.URL()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.SetReadDeadline(time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		_, err = conn.Read(make([]byte, 1))
		want := classified{"timeout", "read tcp " + hostOf(t, srv.URL()) + ": timeout"}
		if diff := cmp.Diff(want, of(err)); diff != "" {
			t.Errorf("Of(%v) (-want +got):\n%s", err, diff)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		srv := geminitest.NewServer(t, geminitest.Options{Handler: func(*geminitest.Request) *geminitest.Reply {
			cancel()
			return &geminitest.Reply{Stall: true}
		}})
		want := classified{"canceled", "canceled"}
		if diff := cmp.Diff(want, of(call(t, ctx, srv.ClientConfig()))); diff != "" {
			t.Errorf("Of (-want +got):\n%s", diff)
		}
	})
	t.Run("deadline passed", func(t *testing.T) {
		srv := geminitest.NewServer(t, geminitest.Options{})
		ctx, cancel := context.WithDeadline(t.Context(), time.Unix(1, 0))
		defer cancel()
		want := classified{"timeout", "deadline exceeded"}
		if diff := cmp.Diff(want, of(call(t, ctx, srv.ClientConfig()))); diff != "" {
			t.Errorf("Of (-want +got):\n%s", diff)
		}
	})
}

// Shapes no loopback test can produce (no resolver here): built by hand.
func TestNetworkErrorShapes(t *testing.T) {
	dns := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "generativelanguage.googleapis.com", IsNotFound: true}}
	tests := []struct {
		name string
		err  error
		want classified
	}{
		{"host not found; path, query and credentials dropped",
			&url.Error{Op: "Post", URL: "https://user:pw@generativelanguage.googleapis.com/v1beta/models/x:generateContent?key=SECRET", Err: dns},
			classified{"network", "Post https://generativelanguage.googleapis.com: dns: no such host"}},
		{"dns timeout", &net.DNSError{Err: "i/o timeout", Name: "example.com", IsTimeout: true},
			classified{"timeout", "timeout"}},
		{"dns failure", &net.DNSError{Err: "server misbehaving", Name: "example.com"},
			classified{"network", "dns lookup failed"}},
		{"unparsable URL, closed connection", &url.Error{Op: "Get", URL: "::", Err: net.ErrClosed},
			classified{"network", "Get: use of closed connection"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, of(tt.err)); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
		})
	}
}
