//go:build !unix

package discover

import "os"

// openFlags: outside Unix an open does not wait for a FIFO writer; the
// opened file is still refused unless it is a regular file.
const openFlags = os.O_RDONLY
