package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/processors/request"
)

// supportArgs are the arguments of every customer-service tool.
type supportArgs struct {
	OrderID    string  `json:"order_id" jsonschema:"the order number, as printed on the invoice (digits only)"`
	CustomerID string  `json:"customer_id,omitempty" jsonschema:"the customer's account id, when the order number is unknown"`
	Reason     string  `json:"reason,omitempty" jsonschema:"why the customer asks, in the customer's words, for the audit trail"`
	Amount     float64 `json:"amount,omitempty" jsonschema:"an amount in the order's currency, when the action moves money"`
}

// supportTools are the 14 tools of a customer-service agent.
func supportTools(t *testing.T) []tool.Tool {
	t.Helper()
	names := []string{"lookup_order", "track_shipment", "cancel_order", "issue_refund", "issue_store_credit",
		"change_address", "resend_invoice", "open_return", "check_return_status", "escalate_to_supervisor",
		"lookup_customer", "update_contact_details", "apply_discount_code", "schedule_callback"}
	var out []tool.Tool
	for _, name := range names {
		tl, err := functiontool.New(functiontool.Config{Name: name, Description: "Customer service action " +
			strings.ReplaceAll(name, "_", " ") + ". Use it only after the customer confirmed the order number; " +
			"never guess an order number, and report the tool's answer in plain words."},
			func(_ agent.ToolContext, a supportArgs) (map[string]any, error) {
				return map[string]any{"status": "done", "order_id": a.OrderID}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tl)
	}
	return out
}

// supportPolicy is the agent's instruction: sentences of a refund and shipping policy, repeated
// to about words words.
func supportPolicy(words int) string {
	sentences := []string{
		"Greet the customer by name when the account shows one, and keep every answer under five sentences.",
		"Refunds up to fifty euros are issued at once; above that, escalate to a supervisor with the order number and the reason.",
		"Never promise a delivery date the carrier has not confirmed; quote the tracking status as the carrier states it.",
		"Returns are accepted within thirty days of delivery for unused items in their original packaging.",
		"Address changes are possible until the parcel leaves the warehouse; after that, offer a redirect through the carrier.",
		"Discount codes apply to the next order only and cannot be combined with store credit.",
	}
	var b strings.Builder
	for i := 0; len(strings.Fields(b.String())) < words; i++ {
		fmt.Fprintf(&b, "Rule %d. %s\n", i+1, sentences[i%len(sentences)])
	}
	return b.String()
}

// A 4,096-token model and a customer-service agent whose policy and 14 tool declarations count
// about 3,400 tokens: the first request fits the hard limit (3,502) by its estimate but not with
// the prior safety margin (10%). It is sent — the margin was a guess, no count was reported yet
// — and the model's count calibrates every later decision, which add the margin learned from
// it. A request its estimate alone puts over the hard limit is still refused with the typed
// error, before any count and after, and the error names the margin's source.
func TestSmallWindowSendsTheFirstRequestAndLearns(t *testing.T) {
	for name, newBase := range backends(t) {
		t.Run(name, func(t *testing.T) {
			const modelName = "support-model"
			// The provider counts 5% fewer tokens than our estimate (it carries a safety factor).
			m := &llmtest.Model{ModelName: modelName, UsageScale: 0.95, Default: func(*model.LLMRequest) (*genai.Content, error) {
				return genai.NewContentFromText("Your order 4417 left the warehouse on Monday; the carrier expects it on Thursday.", genai.RoleModel), nil
			}}
			core, logs := observer.New(zapcore.DebugLevel)
			h, err := hooks.New(adkctx.Config{Logger: zap.New(core),
				Models: []budget.ModelInfo{{Name: modelName, ContextWindow: 4_096, MaxOutputTokens: 1_024}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := h.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			a, err := llmagent.New(llmagent.Config{Name: "support", Model: m, Instruction: supportPolicy(480), Tools: supportTools(t)})
			if err != nil {
				t.Fatal(err)
			}
			rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: newBase(), AutoCreateSession: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := runner.New(rc)
			if err != nil {
				t.Fatal(err)
			}
			send := func(session, text string) error {
				for _, err := range r.Run(t.Context(), "user", session, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
					if err != nil {
						return err
					}
				}
				return nil
			}
			limits := h.Limits(modelName)
			decisions := func() []map[string]any {
				var out []map[string]any
				for _, e := range logs.FilterMessage("budget decision").All() {
					out = append(out, e.ContextMap())
				}
				return out
			}
			num := func(d map[string]any, k string) int { return int(d[k].(int64)) }

			// The first request: sent, the prior margin waived and said so.
			if err := send("s1", "Where is my order 4417?"); err != nil {
				t.Fatalf("first request refused: %v", err)
			}
			if m.Calls() != 1 {
				t.Fatalf("model calls = %d, want 1", m.Calls())
			}
			first := decisions()[0]
			if p, margin := num(first, "predicted_tokens"), num(first, "safety_margin"); p > limits.Hard || p+margin <= limits.Hard || p < 3_300 {
				t.Fatalf("first request: predicted %d, margin %d, hard limit %d: the test needs one of about 3,400 tokens that "+
					"fits by its estimate and not with the prior margin", p, margin, limits.Hard)
			}
			t.Logf("first request: estimated %d, predicted %d, prior margin %d, hard limit %d",
				num(first, "estimated_tokens"), num(first, "predicted_tokens"), num(first, "safety_margin"), limits.Hard)
			if first["margin_source"] != string(budget.MarginPrior) || first["margin_waived"] != true || first["action"] != "compaction_needed" {
				t.Errorf("first decision: margin_source %v, margin_waived %v, action %v; want prior, true, compaction_needed",
					first["margin_source"], first["margin_waived"], first["action"])
			}

			// Later turns: the margin is learned, anchored on the reported count; it covers only
			// what was added since, never waived, and every request fits by the provider's count.
			for turn := range 6 {
				if err := send("s1", fmt.Sprintf("Question %d: and what if the parcel does not arrive by Thursday?", turn)); err != nil {
					t.Fatalf("turn %d: %v", turn+2, err)
				}
			}
			ds := decisions()
			if len(ds) != 7 || m.Calls() != 7 {
				t.Fatalf("decisions %d, model calls %d; want 7 each", len(ds), m.Calls())
			}
			var margins, actions []string
			for _, d := range ds[1:] {
				margins = append(margins, fmt.Sprint(d["safety_margin"]))
				actions = append(actions, fmt.Sprint(d["action"]))
			}
			t.Logf("later calls: learned margins %v, actions %v", margins, actions)
			for i, d := range ds[1:] {
				if d["margin_source"] != string(budget.MarginLearned) || d["margin_waived"] != false {
					t.Errorf("call %d: margin_source %v, margin_waived %v; want learned, false", i+2, d["margin_source"], d["margin_waived"])
				}
				if margin := num(d, "safety_margin"); margin <= 0 || margin >= num(first, "safety_margin") {
					t.Errorf("call %d: learned margin %d, want > 0 and below the prior %d (it covers only what is new)", i+2, margin, num(first, "safety_margin"))
				}
			}
			usage := logs.FilterMessage("model usage").All()
			if len(usage) != 7 {
				t.Fatalf("model usage entries %d, want 7", len(usage))
			}
			for i, e := range usage {
				if counted := int(e.ContextMap()["prompt_tokens"].(int64)); counted > limits.Hard {
					t.Errorf("call %d: the model counted %d tokens, over the hard limit %d", i+1, counted, limits.Hard)
				}
			}
			trimmed := 0
			for _, req := range m.Requests() {
				if strings.Contains(llmtest.AllText(req), "earlier conversation turns") {
					trimmed++
				}
			}
			if trimmed == 0 {
				t.Errorf("no request was trimmed: the test never reaches the hard limit after the first call")
			}

			// A paste the estimate alone puts over the hard limit: refused, the margin learned.
			calls := m.Calls()
			paste := strings.Repeat("order line 4417-A2 qty 1 ", 60)
			var tooBig *request.BudgetExceededError
			if err := send("s1", paste); !errors.As(err, &tooBig) {
				t.Fatalf("err = %v, want *request.BudgetExceededError", err)
			} else if tooBig.MarginSource != budget.MarginLearned || !strings.Contains(err.Error(), "learned from the token counts the model reported") {
				t.Errorf("refusal after counts: source %q, message %q", tooBig.MarginSource, err)
			}
			// The same as a new session's first request: no count yet, still refused, a prior.
			if err := send("s2", paste); !errors.As(err, &tooBig) {
				t.Fatalf("err = %v, want *request.BudgetExceededError", err)
			} else if tooBig.MarginSource != budget.MarginPrior || !strings.Contains(err.Error(), "even without a safety margin (the model has reported no token count") {
				t.Errorf("refusal before counts: source %q, message %q", tooBig.MarginSource, err)
			}
			if m.Calls() != calls {
				t.Errorf("the model was called for a request that cannot fit")
			}
			rejected := logs.FilterMessage("budget decision").FilterField(zap.String("action", "rejected")).All()
			var sources []any
			for _, e := range rejected {
				sources = append(sources, e.ContextMap()["margin_source"])
			}
			if fmt.Sprint(sources) != "[learned prior]" {
				t.Errorf("rejected decisions' margin sources %v, want [learned prior]", sources)
			}
		})
	}
}
