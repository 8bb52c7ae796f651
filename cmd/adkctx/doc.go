// Command adkctx shows what adkctx would do to an application's own recorded agent sessions
// before it is turned on.
//
//	adkctx replay [flags] SOURCE...
//
// (Under construction: see issue 27.)
package main
