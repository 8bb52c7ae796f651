package dbartifact

// What differs between adk-go v1 and v2 for this package, and only that: the rest is generated
// for adk-go v2 (adk2/hooks/dbartifact) by go run ./internal/cmd/glue2.

import "time"

// createTime is an artifact version's creation time as adk-go v1 reports it: Unix seconds.
func createTime(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
