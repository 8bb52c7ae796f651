package errkind

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
)

// classifyNetwork recognizes a failed connection: *url.Error (what net/http's client returns),
// *net.OpError, *net.DNSError, TLS and certificate errors, connection errnos, and any net.Error
// that timed out (Timeout).
func classifyNetwork(err error) (Kind, string, bool) {
	var (
		urlErr *url.Error
		opErr  *net.OpError
		netErr net.Error
	)
	hasURL := errors.As(err, &urlErr) && urlErr != nil
	hasOp := errors.As(err, &opErr) && opErr != nil
	reason := networkReason(err)
	if reason == "" && !hasURL && !hasOp && !errors.As(err, &netErr) {
		return "", "", false
	}
	kind := Network
	if reason == reasonTimeout {
		kind = Timeout
	}
	if reason == "" {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			reason = "connection closed"
		} else {
			reason = typeName(innermost(err))
		}
	}
	var where []string
	switch {
	case hasURL:
		where = []string{word(urlErr.Op), redactURL(urlErr.URL)}
	case hasOp:
		where = []string{word(opErr.Op), word(opErr.Net)}
		if opErr.Addr != nil && !isNil(opErr.Addr) {
			where = append(where, address(opErr.Addr.String()))
		}
	}
	if w := strings.Join(slices.DeleteFunc(where, func(s string) bool { return s == "" }), " "); w != "" {
		return kind, w + ": " + reason, true
	}
	return kind, reason, true
}

// maxAddress is the longest host or socket address echoed.
const maxAddress = 255

// word is s when it is a short word of letters and digits ("Post", "dial", "tcp"), else "".
func word(s string) string {
	return code(s, 16, func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' })
}

// address is s when it is a printable address without spaces (host:port, [::1]:5432, a socket
// path), else "".
func address(s string) string {
	return code(s, maxAddress, func(c byte) bool { return c > ' ' && c < 0x7f })
}

const reasonTimeout = "timeout"

// networkReason names what went wrong from the error's types and errnos; "" when none is known.
// Every result is a fixed string or a type name.
func networkReason(err error) string {
	var (
		netErr  net.Error
		dnsErr  *net.DNSError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		header  tls.RecordHeaderError
		alert   tls.AlertError
	)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return reasonTimeout
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "dns: no such host"
		}
		return "dns lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.ECONNABORTED):
		return "connection aborted"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, net.ErrClosed):
		return "use of closed connection"
	case errors.As(err, &verify):
		return "tls: certificate verification failed (" + typeName(innermost(verify)) + ")"
	case errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid):
		return "tls: certificate rejected (" + typeName(innermost(err)) + ")"
	case errors.As(err, &header):
		return "tls: malformed record (peer not speaking TLS)"
	case errors.As(err, &alert):
		// The alert's text is a fixed description from the TLS alert table.
		return alert.Error()
	}
	return ""
}

// redactURL keeps the scheme and host of raw: no credentials, path or query (a key may travel
// in a query, a name in a path).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme, host := word(u.Scheme), address(u.Host)
	if scheme == "" || host == "" {
		return ""
	}
	return scheme + "://" + host
}

// innermost follows the first Unwrap chain to its end.
func innermost(err error) error {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			return err
		}
		err = next
	}
}
