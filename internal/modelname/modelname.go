// Package modelname holds the one form of a model's name that the model registry matches on,
// shared by the registry and the configuration's validation (two entries naming one model).
package modelname

import "strings"

// Normalize lower-cases name, trims spaces and strips any path prefix ("models/",
// "publishers/google/models/", "openai/", "projects/p/locations/l/publishers/google/models/"):
// everything up to the last '/'.
func Normalize(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return strings.ToLower(name)
}
