package errkindtest_test

import "github.com/adkctx/adkctx/glue"

// classified is glue.ErrorKind's answer as one comparable value.
type classified struct {
	Kind string
	Msg  string
}

func of(err error) classified {
	k, m := glue.ErrorKind(err)
	return classified{k, m}
}
