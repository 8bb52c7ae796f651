package errkindtest_test

import "github.com/adkctx/adkctx/internal/errkind"

// classified is errkind.Of's answer as one comparable value.
type classified struct {
	Kind errkind.Kind
	Msg  string
}

func of(err error) classified {
	k, m := errkind.Of(err)
	return classified{k, m}
}
