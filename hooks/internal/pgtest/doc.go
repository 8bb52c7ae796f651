// Package pgtest gives tests a real PostgreSQL database of their own.
//
// The server is the one named by $ADKCTX_POSTGRES_DSN (scripts/postgres.sh starts a throwaway
// one and prints its DSN; .ci/run sets the variable). Without the variable every caller is
// skipped, so `make test` passes on a machine without PostgreSQL. With it, a server that cannot
// be reached fails the test: a set variable means the PostgreSQL tests are meant to run.
//
// Each call to [DSN] creates a new database with a unique name and drops it when the test ends,
// so tests are isolated from each other and may run in parallel.
package pgtest
