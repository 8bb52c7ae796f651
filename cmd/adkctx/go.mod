module github.com/adkctx/adkctx/cmd/adkctx

go 1.25.0

require (
	github.com/adkctx/adkctx v0.0.0
	github.com/adkctx/adkctx/hooks v0.0.0
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)

// Development: the core and the v1 glue are this repository's modules. A release requires their
// tagged versions instead.
replace (
	github.com/adkctx/adkctx => ../..
	github.com/adkctx/adkctx/hooks => ../../hooks
)
