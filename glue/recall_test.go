package glue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/recall"
)

// outputs is one session's saved outputs in memory, each read whole; fail, when set, fails every
// read, and block makes every read wait for its context.
type outputs struct {
	saved map[string][]byte
	fail  error
	block bool
}

func (o *outputs) Layout(ctx context.Context, name string) (*recall.Layout, error) {
	if o.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if o.fail != nil {
		return nil, o.fail
	}
	data, ok := o.saved[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	lay, _ := recall.Split(data, 0)
	lay.Version, lay.MIMEType = 1, "text/plain"
	return lay, nil
}

func (o *outputs) ReadChunks(_ context.Context, name string, _ int64, first, count int) ([][]byte, error) {
	_, chunks := recall.Split(o.saved[name], 0)
	return chunks[first : first+count], nil
}

func (o *outputs) Recent(context.Context, string, int, int) ([]recall.OutputInfo, error) {
	return nil, nil
}

func (o *outputs) Save(context.Context, string, []byte, string) (int64, error) {
	return 0, errors.New("read only")
}

func (o *outputs) Delete(context.Context, string, int64) error { return errors.New("read only") }

// caller is a tool context as the glue hands it to Recall.
type caller struct{}

func (caller) AppName() string      { return "app" }
func (caller) UserID() string       { return "u" }
func (caller) SessionID() string    { return "s1" }
func (caller) InvocationID() string { return "inv-1" }
func (caller) Branch() string       { return "root" }
func (caller) AgentName() string    { return "coder" }

// Recall runs a call by the tool's name with the model's arguments: a page, or an error the model
// reads — its own mistake as it is and unlogged, a failure of the store or of the time bound
// named, and logged once without the query.
func TestRecall(t *testing.T) {
	const name = "adkctx-tool-output-run_tests-c1.txt"
	var log strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	saved := map[string][]byte{name: []byte(log.String())}
	for _, tc := range []struct {
		name    string
		call    RecallCall
		want    string // in the result, or in the error with wantErr
		wantErr bool
		logged  string // the error_kind logged; "": no log
	}{
		{"a page", RecallCall{Tool: recall.ToolReadOutput, Args: map[string]any{"name": name, "range": "120-122"}, Store: &outputs{saved: saved}},
			"120\tline 120\n121\tline 121\n122\tline 122", false, ""},
		{"typed arguments", RecallCall{Tool: recall.ToolReadOutput, Args: struct {
			Name  string `json:"name"`
			Range string `json:"range"`
		}{name, "-1"}, Store: &outputs{saved: saved}}, "300\tline 300", false, ""},
		{"the model's mistake", RecallCall{Tool: recall.ToolReadOutput, Args: map[string]any{"name": name, "range": "9-3"}, Store: &outputs{saved: saved}},
			"before it starts", true, ""},
		{"arguments of another shape", RecallCall{Tool: recall.ToolSearchOutputs, Args: map[string]any{"query": 7}, Store: &outputs{saved: saved}},
			"arguments", true, ""},
		{"no artifact service", RecallCall{Tool: recall.ToolSearchHistory, Args: map[string]any{"query": "SECRETWORD"}},
			"no artifact service is wired", true, "no_artifact_service"},
		{"a store failure", RecallCall{Tool: recall.ToolReadOutput, Args: map[string]any{"name": name}, Store: &outputs{fail: errors.New("disk on fire")}},
			"read_saved_output failed: disk on fire", true, "unknown"},
		{"the time bound", RecallCall{Tool: recall.ToolSearchOutputs, Args: map[string]any{"query": "SECRETWORD", "name": name}, Store: &outputs{block: true}, Timeout: 10 * time.Millisecond},
			"search_saved_outputs took longer than 10ms", true, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, observed := observer.New(zap.DebugLevel)
			e, err := New(adkctx.Config{Logger: zap.New(core)})
			if err != nil {
				t.Fatal(err)
			}
			text, err := e.Recall(context.Background(), caller{}, tc.call)
			got := text
			if err != nil {
				got = err.Error()
			}
			if (err != nil) != tc.wantErr || !strings.Contains(got, tc.want) {
				t.Errorf("Recall = %q, %v; want %q (error: %v)", text, err, tc.want, tc.wantErr)
			}
			logs := observed.All()
			switch {
			case tc.logged == "" && len(logs) > 0:
				t.Errorf("logged %v", logs)
			case tc.logged != "" && len(logs) != 1:
				t.Errorf("logged %v; want one entry", logs)
			case tc.logged != "":
				fields := logs[0].ContextMap()
				if fields["error_kind"] != tc.logged || fields["session_id"] != "s1" || fields["tool"] != tc.call.Tool ||
					strings.Contains(fmt.Sprint(fields), "SECRETWORD") {
					t.Errorf("log fields %v; want error_kind %q, the session and the tool, no query", fields, tc.logged)
				}
			}
		})
	}
}
