package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/adkctx/adkctx"
)

// configFields that a file cannot set, with why.
var notFromFile = map[string]string{
	"Logger":                "the replay reads adkctx's logs itself",
	"MeterProvider":         "not a value",
	"TracerProvider":        "not a value",
	"Compaction.Summarizer": "use -summarizer",
	"Compaction.Fallback":   "use -summarizer",
}

// durations are the fields a file may give as Go durations ("30s", "2m").
var durations = []string{"Timeout", "Backoff", "ReadMargin"}

// loadConfig reads an adkctx.Config from a JSON or YAML file. Keys are the Go field names
// (matched case-insensitively, as encoding/json does); unknown keys are errors; the durations of
// Compaction (Timeout, Backoff, ReadMargin) are strings like "30s" or nanoseconds; Logger, the
// meter and tracer providers and the summarizers cannot be set (see notFromFile).
func loadConfig(path string) (adkctx.Config, error) {
	var cfg adkctx.Config
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	var top map[string]any
	if err := json.Unmarshal(js, &top); err != nil || top == nil {
		return cfg, fmt.Errorf("config %s: expected an object of adkctx.Config's fields", path)
	}
	for field, why := range notFromFile {
		if has(top, field) {
			return cfg, fmt.Errorf("config %s: %s cannot be set from a file: %s", path, field, why)
		}
	}
	if c, ok := lookup(top, "Compaction").(map[string]any); ok {
		for _, name := range durations {
			for k, v := range c {
				if s, ok := v.(string); ok && equalFold(k, name) {
					d, err := time.ParseDuration(s)
					if err != nil {
						return cfg, fmt.Errorf("config %s: Compaction.%s: %w", path, name, err)
					}
					c[k] = int64(d)
				}
			}
		}
	}
	js, _ = json.Marshal(top)
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// lookup finds a key case-insensitively.
func lookup(m map[string]any, key string) any {
	for k, v := range m {
		if equalFold(k, key) {
			return v
		}
	}
	return nil
}

// has reports whether a dotted path is set in m.
func has(m map[string]any, path string) bool {
	var cur any = m
	for _, part := range splitDots(path) {
		mm, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		cur = lookup(mm, part)
		if cur == nil {
			return false
		}
	}
	return true
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func equalFold(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }
