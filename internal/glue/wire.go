package glue

import (
	"context"
	"errors"
	"iter"
	"reflect"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/engine"
)

// PluginName is the name of adkctx's plugin.
const PluginName = "adkctx"

// CheckRunner reports why a runner configuration cannot be wired: it has no session service or
// no agent, or one of its plugins is already adkctx's.
func CheckRunner[P interface {
	comparable
	Name() string
}](hasSessions, hasAgent bool, plugins []P) error {
	if !hasSessions {
		return errors.New("adkctx: runner.Config.SessionService is required")
	}
	if !hasAgent {
		return errors.New("adkctx: runner.Config.Agent is required")
	}
	var none P
	for _, p := range plugins {
		if p != none && p.Name() == PluginName {
			return errors.New("adkctx: runner.Config is already wired (it has the adkctx plugin)")
		}
	}
	return nil
}

// AgentModel returns the model of agent a, or of its first sub-agent (depth first) that has one.
// adk-go (v1 and v2) has no accessor for an LLM agent's model: it is read from the exported
// Model field its LLM agents carry.
func AgentModel[M any, A interface{ SubAgents() []A }](a A) (M, bool) {
	var none M
	if any(a) == nil {
		return none, false
	}
	if v := reflect.ValueOf(a); v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		if f := v.Elem().FieldByName("Model"); f.IsValid() && f.CanInterface() {
			if m, ok := f.Interface().(M); ok {
				return m, true
			}
		}
	}
	for _, sub := range a.SubAgents() {
		if m, ok := AgentModel[M](sub); ok {
			return m, true
		}
	}
	return none, false
}

// Map converts each value of a stream (adk-go's *model.LLMResponse to the core's, zero copy).
func Map[A, B any](seq iter.Seq2[A, error], conv func(A) B) iter.Seq2[B, error] {
	return func(yield func(B, error) bool) {
		for a, err := range seq {
			if !yield(conv(a), err) {
				return
			}
		}
	}
}

// Saver returns how the engine saves a tool's full output through adk-go's agent.Artifacts
// (either version); nil when the runner has no artifact service.
func Saver[R any, A interface {
	Save(ctx context.Context, name string, data *genai.Part) (R, error)
}](arts A) engine.SaveFunc {
	if any(arts) == nil {
		return nil
	}
	return func(ctx context.Context, name string, p *genai.Part) error {
		_, err := arts.Save(ctx, name, p)
		return err
	}
}

// NameOf returns the name of a tool ("" for none).
func NameOf(t interface{ Name() string }) string {
	if t == nil {
		return ""
	}
	return t.Name()
}
