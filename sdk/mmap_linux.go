package sdk

import "golang.org/x/sys/unix"

// mmapFlags maps partitions shared and pre-faults them: the digest pass reads
// every page right away, and populating in one call beats a fault per page.
const mmapFlags = unix.MAP_SHARED | unix.MAP_POPULATE
