// Package dbartifact is an adk-go artifact.Service on a SQL database through gorm: the same
// SQLite or PostgreSQL database adk-go's session/database service keeps sessions in, so that the
// full tool outputs adkctx saves survive a restart wherever the sessions do.
//
// It follows adk-go's artifact conventions, as its in-memory service implements them: Save
// creates the next version (SaveRequest.Version is ignored, as adk-go's in-memory and GCS
// services ignore it), Load and GetArtifactVersion without a version get the newest, Delete
// without a version removes every version, names starting with "user:" are user-scoped (visible
// from every session of the user), requests are checked with their Validate methods, and missing
// artifacts are errors wrapping fs.ErrNotExist.
//
// Each version is stored in chunks (rows of at most [Config.ChunkBytes] bytes, cut after a line
// break where one is near: [recall.Split]) beside its layout: size, MIME type, whether it is
// text, and each chunk's size and line count, recorded at save time. Through its RecallStore method
// (recall.ChunkStore) the recall tools read one page of a 2 MB output in one or two chunks
// instead of the whole.
//
//	db, err := gorm.Open(sqlite.Open("sessions.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"))
//	artifacts := dbartifact.NewService(db, dbartifact.Config{})
//	err = dbartifact.Migrate(ctx, db)
//
// Tables: adkctx_artifact_versions and adkctx_artifact_chunks.
package dbartifact
