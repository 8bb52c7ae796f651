// Package errkind classifies errors into a small, stable set of kinds for logs and metrics, with
// a message that is safe to log.
//
// # What a message may carry
//
// A message never carries conversation text: prompts, replies, tool arguments and results, or
// stored rows. Each classifier builds its message from typed fields only, never from the wrapped
// error's Error() text (a wrapper may quote the prompt or a session id):
//
//   - model API errors (genai.APIError, from the Gemini API and Vertex AI): the HTTP code, the
//     status, the ErrorInfo reason when present, and the provider's message cut to one line of at
//     most 200 bytes. Google's API error messages describe what went wrong with the call (quota,
//     key, model name, field) and do not quote the request's contents; the cap bounds the damage
//     if a proxy in between returns something else (an HTML page, a body echoing the request);
//   - network errors: the operation, the scheme and host of the URL (no path, query or
//     credentials) or the socket address, and a fixed reason such as "connection refused" or
//     "timeout" (else the innermost error's type name);
//   - SQLite errors: the result code and its name (a SQLite message may quote SQL text);
//   - context errors: "deadline exceeded" or "canceled";
//   - adkctx's own errors ([Kinded]): their Error() text, which they keep free of conversation
//     text;
//   - anything else: the Go type name of the error only.
//
// Classification uses error types and codes (errors.As, errors.Is, HTTP and gRPC status codes,
// SQLite result codes), never the text of a message.
package errkind
