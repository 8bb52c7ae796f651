package budget

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"
)

// BenchmarkEstimate measures EstimateText throughput per sample (MB/s via
// b.SetBytes) and reports the accuracy figures beside it:
// ratio_ours = EstimateText/o200k, ratio_bytes4 = (bytes/4)/o200k.
//
//	go test -run '^$' -bench BenchmarkEstimate -benchmem ./budget/
func BenchmarkEstimate(b *testing.B) {
	enc := realTokenizer(b)
	for _, s := range samples {
		text := readSample(b, s.file)
		// 64 copies (~200-330 KB) so the loop measures the scan, not call overhead.
		big := strings.Repeat(text, 64)
		real, err := enc.Count(text)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(s.file, ".txt"), func(b *testing.B) {
			b.SetBytes(int64(len(big)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = EstimateText(big)
			}
			_ = n
			b.ReportMetric(float64(EstimateText(text))/float64(real), "ratio_ours")
			b.ReportMetric(float64(estimateBytesDiv4(text))/float64(real), "ratio_bytes4")
		})
	}
}

// request is what EstimateRequest counts.
type request struct {
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
}

// bigRequest builds a request of n contents: user text, model function
// calls, tool responses with shell output and JSON, model answers.
func bigRequest(tb testing.TB, n int) *request {
	tb.Helper()
	ls, js, prose := readSample(tb, "ls_la.txt"), readSample(tb, "api.json"), readSample(tb, "prose_en.txt")
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		tb.Fatal(err)
	}
	req := &request{Config: &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(prose, genai.RoleUser),
		Tools:             sampleTools(),
	}}
	for i := range n {
		var c *genai.Content
		switch i % 4 {
		case 0:
			c = genai.NewContentFromText(fmt.Sprintf("Step %d: list the directory and summarize the orders.", i), genai.RoleUser)
		case 1:
			c = genai.NewContentFromFunctionCall("run_shell", map[string]any{"cmd": "ls -la", "step": float64(i)}, genai.RoleModel)
		case 2:
			c = genai.NewContentFromFunctionResponse("run_shell", map[string]any{"output": ls[:1000+i%1000], "orders": doc["data"]}, genai.RoleUser)
		default:
			c = genai.NewContentFromText(prose[:200+i%2000], genai.RoleModel)
		}
		req.Contents = append(req.Contents, c)
	}
	return req
}

// BenchmarkEstimateRequest estimates a 1,000-content request. Each
// iteration also runs encoding/json on the same request (the work a model
// adapter does anyway) and times both separately, interleaved, so the
// estimate/marshal ratio holds even on a loaded machine. ns/op covers both;
// read estimate_ns and marshal_ns.
//
//	go test -run '^$' -bench BenchmarkEstimateRequest -benchmem ./budget/
func BenchmarkEstimateRequest(b *testing.B) {
	req := bigRequest(b, 1000)
	data, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	tokens := 0
	var estNs, marshalNs time.Duration
	for b.Loop() {
		t0 := time.Now()
		tokens = EstimateRequest(req.Contents, req.Config)
		t1 := time.Now()
		if _, err := json.Marshal(req); err != nil {
			b.Fatal(err)
		}
		estNs += t1.Sub(t0)
		marshalNs += time.Since(t1)
	}
	b.ReportMetric(float64(tokens), "tokens")
	b.ReportMetric(float64(estNs.Nanoseconds())/float64(b.N), "estimate_ns")
	b.ReportMetric(float64(marshalNs.Nanoseconds())/float64(b.N), "marshal_ns")
	b.ReportMetric(float64(estNs)/float64(marshalNs), "estimate/marshal")
}

// BenchmarkEstimateRequestAllocs reports the estimator alone (allocs/op
// must be 0).
func BenchmarkEstimateRequestAllocs(b *testing.B) {
	req := bigRequest(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		_ = EstimateRequest(req.Contents, req.Config)
	}
}
