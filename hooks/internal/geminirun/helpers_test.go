package geminirun_test

import (
	"testing"

	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"

	"github.com/adkctx/adkctx/hooks/internal/geminitest"
)

const modelName = "gemini-2.5-flash"

// geminiModel is adk-go's Gemini model for name, talking to srv.
func geminiModel(t testing.TB, srv *geminitest.Server, name string) model.LLM {
	t.Helper()
	m, err := gemini.NewModel(t.Context(), name, srv.ClientConfig())
	if err != nil {
		t.Fatalf("gemini.NewModel: %v", err)
	}
	return m
}
