package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "adkctx: not built yet")
	os.Exit(2)
}
