module github.com/adkctx/adkctx/cmd/adkctx

go 1.25.0
