package budget

import (
	"encoding/json"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// cloneRequest copies contents, parts and maps the way adk-go's reflective
// deep copy does: new structs and maps, shared string data.
func cloneRequest(req *model.LLMRequest) *model.LLMRequest {
	out := &model.LLMRequest{Model: req.Model, Config: req.Config}
	for _, c := range req.Contents {
		nc := &genai.Content{Role: c.Role}
		for _, p := range c.Parts {
			np := *p
			if p.FunctionCall != nil {
				fc := *p.FunctionCall
				fc.Args = maps.Clone(fc.Args)
				np.FunctionCall = &fc
			}
			if p.FunctionResponse != nil {
				fr := *p.FunctionResponse
				fr.Response = maps.Clone(fr.Response)
				np.FunctionResponse = &fr
			}
			nc.Parts = append(nc.Parts, &np)
		}
		out.Contents = append(out.Contents, nc)
	}
	return out
}

func TestEstimatorMatchesUncached(t *testing.T) {
	req := bigRequest(t, 200)
	want := EstimateRequest(req)
	e := NewEstimator(0)
	for i := range 3 {
		r := cloneRequest(req)
		if got := e.EstimateRequest(r); got != want {
			t.Fatalf("pass %d: Estimator.EstimateRequest = %d, EstimateRequest = %d", i, got, want)
		}
	}
	st := e.Stats()
	if st.Misses == 0 || st.Hits < 2*st.Misses {
		t.Errorf("stats %+v: want the second and third pass served from the cache", st)
	}
	// Same answers for single contents and text; nil Estimator works.
	var nilEst *Estimator
	big := strings.Repeat(readSample(t, "go_test.txt"), 2)
	for _, c := range req.Contents[:8] {
		if a, b, n := e.EstimateContent(c), EstimateContent(c), nilEst.EstimateContent(c); a != b || n != b {
			t.Errorf("EstimateContent: cached %d, nil %d, plain %d", a, n, b)
		}
	}
	if a, b := e.EstimateText(big), EstimateText(big); a != b {
		t.Errorf("EstimateText: cached %d, plain %d", a, b)
	}
	if a, b := e.EstimateContents(req.Contents), EstimateContents(req.Contents); a != b {
		t.Errorf("EstimateContents: cached %d, plain %d", a, b)
	}
	if nilEst.Stats() != (EstimatorStats{}) || nilEst.EstimateRequest(nil) != 0 {
		t.Error("nil Estimator")
	}
}

func TestEstimatorBoundedAndConcurrent(t *testing.T) {
	e := NewEstimator(64 << 10)
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = strings.Repeat(string(rune('a'+i%26))+" word ", 200+i) // ~1.2-2 KB each
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				s := texts[(g*7+i)%len(texts)]
				if got, want := e.EstimateText(s), EstimateText(s); got != want {
					t.Errorf("EstimateText mismatch %d vs %d", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st := e.Stats(); st.Bytes > 64<<10 || st.Entries == 0 {
		t.Errorf("stats %+v: want ≤ 64 KiB cached and some entries", st)
	}
}

// BenchmarkEstimatorRequest is BenchmarkEstimateRequest through an
// Estimator on a fresh adk-go-style clone of the same history each
// iteration (the steady state of a session: only new contents are scanned).
//
//	go test -run '^$' -bench 'BenchmarkEstimatorRequest' -benchmem ./budget/
func BenchmarkEstimatorRequest(b *testing.B) {
	req := bigRequest(b, 1000)
	e := NewEstimator(0)
	e.EstimateRequest(req)
	var estNs, marshalNs time.Duration
	for b.Loop() {
		r := cloneRequest(req)
		t0 := time.Now()
		_ = e.EstimateRequest(r)
		t1 := time.Now()
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
		estNs += t1.Sub(t0)
		marshalNs += time.Since(t1)
	}
	b.ReportMetric(float64(estNs.Nanoseconds())/float64(b.N), "estimate_ns")
	b.ReportMetric(float64(marshalNs.Nanoseconds())/float64(b.N), "marshal_ns")
	b.ReportMetric(float64(estNs)/float64(marshalNs), "estimate/marshal")
}
