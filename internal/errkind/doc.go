// Package errkind classifies errors into a small, stable set of kinds for logs and metrics, with
// a message that is safe to log.
//
// # What a message may carry
//
// Kinds, statuses and codes, never text: not conversation text (prompts, replies, tool arguments
// and results), and not text a provider, a tool, a database or a panic produced, which may quote
// it. Each classifier builds its message from typed fields that hold codes, and echoes such a
// field only when it is one (an upper-case status, a five-character SQLSTATE); it never reads a
// wrapped error's Error() text (a wrapper may quote the prompt or a session id):
//
//   - genai's APIError (the Gemini API and Vertex AI): "model API <HTTP code> <google.rpc
//     status> (reason <ErrorInfo reason>)";
//   - other SDKs' errors that carry the HTTP status in a typed value (an HTTPCode() method, as
//     gax-go's apierror.APIError has; an exported StatusCode int field; googleapi.Error's Code):
//     "HTTP <code> (<Go type>, reason <reason>)";
//   - database errors, by behaviour, linking no driver: a SQLSTATE (an SQLState() string method,
//     as pgconn.PgError and pq.Error have), a SQLite result code, adk-go's stale-session
//     refusal (by its fixed prefix): "SQLSTATE <code> (<Go type>)", "SQLite code <code> (<Go type>)";
//   - network errors: the operation, the scheme and host of the URL (no credentials, path or
//     query) or the socket address, and a fixed reason such as "connection refused";
//   - context errors: "deadline exceeded" or "canceled";
//   - adkctx's own errors ([Kinded]): their Error() text, which they keep free of such text;
//   - anything else: the Go type name of the error only.
package errkind
