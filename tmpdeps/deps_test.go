package tmpdeps

import (
	_ "github.com/glebarez/sqlite"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/uuid"
	_ "github.com/tiktoken-go/tokenizer"
	_ "go.uber.org/zap"
	_ "go.uber.org/zap/zaptest/observer"
	_ "google.golang.org/adk/agent/llmagent"
	_ "google.golang.org/adk/model/gemini"
	_ "google.golang.org/adk/plugin"
	_ "google.golang.org/adk/runner"
	_ "google.golang.org/adk/session"
	_ "google.golang.org/adk/session/database"
	_ "google.golang.org/adk/session/sessiontestsuite"
	_ "google.golang.org/adk/artifact"
	_ "google.golang.org/adk/tool/functiontool"
	_ "google.golang.org/genai"
	_ "gorm.io/gorm"
)
