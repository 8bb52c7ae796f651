// Package geminirun holds only tests: they run adk-go v1's runner and llmagent with adk-go's real
// Gemini model (model/gemini over the google.golang.org/genai client) against the loopback fake
// of the Gemini REST API in internal/geminitest, first bare and then with adkctx wired in, so
// what adkctx changes is measured on the wire format a production agent sends.
package geminirun
