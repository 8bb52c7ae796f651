//go:build unix

package discover

import (
	"os"
	"syscall"
)

// openFlags open for reading without ever waiting: O_NONBLOCK makes the
// open of a FIFO return at once instead of waiting for a writer, and
// O_NOCTTY keeps a terminal device from becoming the controlling terminal.
// The opened file is then refused unless fstat says it is a regular file,
// for which O_NONBLOCK changes nothing.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
