package budget

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// sample is one text of testdata/ with its accepted band for
// EstimateText/real (o200k_base).
type sample struct {
	file     string
	kind     string
	min, max float64
}

// The bands: never below 1.0 (the estimate must not under-count on any
// shipped kind of text), and at most 1.35 (a 35% over-count costs headroom,
// not correctness). Measured values are in doc.go and printed by
// TestEstimatorAgainstTokenizer.
var samples = []sample{
	{"prose_en.txt", "prose (English)", 1.0, 1.35},
	{"code_go.txt", "Go code", 1.0, 1.35},
	{"api.json", "JSON (API)", 1.0, 1.35},
	{"ls_la.txt", "ls -la listing", 1.0, 1.35},
	{"go_test.txt", "go test output", 1.0, 1.35},
	{"cjk_zh.txt", "Chinese", 1.0, 1.35},
	{"cjk_ja.txt", "Japanese", 1.0, 1.35},
}

var (
	o200kOnce sync.Once
	o200k     tokenizer.Codec
	o200kErr  error
)

// realTokenizer returns the offline o200k_base codec (the vocabulary is
// compiled into github.com/tiktoken-go/tokenizer).
func realTokenizer(tb testing.TB) tokenizer.Codec {
	tb.Helper()
	o200kOnce.Do(func() { o200k, o200kErr = tokenizer.Get(tokenizer.O200kBase) })
	if o200kErr != nil {
		tb.Fatalf("o200k_base: %v", o200kErr)
	}
	return o200k
}

func readSample(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestEstimatorAgainstTokenizer prints the ratio table (run with -v) and
// checks each sample's ratio against its band. Reproduce with:
//
//	go test -run TestEstimatorAgainstTokenizer -v ./budget/
func TestEstimatorAgainstTokenizer(t *testing.T) {
	enc := realTokenizer(t)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-16s %6s %6s %6s %9s %9s\n", "sample", "bytes", "o200k", "ours", "ours/real", "bytes/4÷real")
	for _, s := range samples {
		text := readSample(t, s.file)
		real, err := enc.Count(text)
		if err != nil || real == 0 {
			t.Fatalf("%s: count %d, %v", s.file, real, err)
		}
		ours := EstimateText(text)
		ratio := float64(ours) / float64(real)
		naive := float64(estimateBytesDiv4(text)) / float64(real)
		fmt.Fprintf(&b, "%-16s %6d %6d %6d %9.3f %9.3f\n", s.kind, len(text), real, ours, ratio, naive)
		if ratio < s.min || ratio > s.max {
			t.Errorf("%s: estimate/real = %.3f (ours %d, o200k %d), want within [%.2f, %.2f]", s.file, ratio, ours, real, s.min, s.max)
		}
	}
	t.Log(b.String())
}

// TestEstimatorShortStrings checks short, awkward strings do not get
// badly under-counted (at least 0.85× real; tiny inputs are dominated by
// rounding and the safety factor, so the upper bound is loose: a ruler of
// 80 '=' is a single o200k token).
func TestEstimatorShortStrings(t *testing.T) {
	enc := realTokenizer(t)
	for _, s := range []string{
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"550e8400-e29b-41d4-a716-446655440000 6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"https://storage.googleapis.com/bucket-name/path/to/object.tar.gz?X-Goog-Signature=abc123",
		"Привет, как дела? Это тестовый текст на русском языке для проверки оценки.",
		"Café déjà vu, naïve façade über straße señor",
		"안녕하세요, 이것은 한국어 텍스트입니다. 토큰 수를 확인합니다.",
		"😀🎉🚀 emoji test ✅ ❌ → ← “quoted” — dash…",
		"0.12345 3.14159 2.71828 1e-9 42 1000000 -7",
		strings.Repeat("=", 80), // ratio ≈ 10, allowed: over-counting is safe
		"-rw-r--r--   1 mara  staff    6148 Feb 27 11:03 .DS_Store",
		"func (l *Limiter) Allow(key string) bool {",
	} {
		real, _ := enc.Count(s)
		ours := EstimateText(s)
		r := float64(ours) / float64(real)
		t.Logf("%-40.40q real=%3d ours=%3d ratio=%.2f", s, real, ours, r)
		maxRatio := 2.0
		if strings.HasPrefix(s, "===") {
			maxRatio = 12
		}
		if r < 0.85 || r > maxRatio {
			t.Errorf("%q: ratio %.2f (ours %d, real %d) outside [0.85, %.0f]", s, r, ours, real, maxRatio)
		}
	}
}

func TestEstimateTextBasics(t *testing.T) {
	tests := []struct {
		in       string
		min, max int
	}{
		{"", 0, 0},
		{" ", 1, 2},
		{"\n", 1, 2},
		{"hello", 1, 2},
		{"hello world", 2, 3},
		{"12345678", 3, 4},
		{"北京", 2, 3},
		{"\xff\xfe", 2, 3},
	}
	for _, tt := range tests {
		if got := EstimateText(tt.in); got < tt.min || got > tt.max {
			t.Errorf("EstimateText(%q) = %d, want in [%d, %d]", tt.in, got, tt.min, tt.max)
		}
	}
}

func TestEstimateTextAllocFree(t *testing.T) {
	text := readSample(t, "code_go.txt") + readSample(t, "cjk_ja.txt")
	if n := testing.AllocsPerRun(20, func() { _ = EstimateText(text) }); n != 0 {
		t.Errorf("EstimateText allocates %.1f times per call, want 0", n)
	}
}

// The estimate of a concatenation is close to the sum of the parts: no
// hidden quadratic or state leak.
func TestEstimateTextAdditive(t *testing.T) {
	a, b := readSample(t, "prose_en.txt"), readSample(t, "api.json")
	sum, whole := EstimateText(a)+EstimateText(b), EstimateText(a+b)
	if d := sum - whole; d < -2 || d > 2 {
		t.Errorf("EstimateText(a)+EstimateText(b) = %d, EstimateText(a+b) = %d", sum, whole)
	}
}

func FuzzEstimateText(f *testing.F) {
	for _, s := range samples {
		b, err := os.ReadFile(filepath.Join("testdata", s.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b[:min(len(b), 300)]))
	}
	f.Add("aAaA1.1.\n\n\t\t  \xff🎉")
	f.Fuzz(func(t *testing.T, s string) {
		n := EstimateText(s)
		if s == "" {
			if n != 0 {
				t.Fatalf("empty string: %d", n)
			}
			return
		}
		// At most about one token per byte (×1.1 safety), at least one.
		if n < 1 || n > len(s)*11/10+2 {
			t.Fatalf("EstimateText(%q) = %d for %d bytes", s, n, len(s))
		}
		// A string of valid runes never costs less than a quarter token per rune.
		if utf8.ValidString(s) && n < utf8.RuneCountInString(s)/8 {
			t.Fatalf("EstimateText(%q) = %d for %d runes", s, n, utf8.RuneCountInString(s))
		}
	})
}
