// Package errkindtest holds only tests: they provoke real failures in the parts adkctx runs
// against (adk-go v1's session services over SQLite and PostgreSQL, a Gemini model over HTTP)
// and check that internal/errkind classifies each one. They live in the hooks module because
// they need adk-go; the classifier is in the adk-go-free root module.
package errkindtest
