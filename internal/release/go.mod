module github.com/adkctx/adkctx/internal/release

go 1.25.0

require (
	github.com/google/go-cmp v0.7.0
	go.uber.org/goleak v1.3.0
	golang.org/x/mod v0.38.0
	golang.org/x/tools v0.48.0
)

require golang.org/x/sync v0.22.0 // indirect
