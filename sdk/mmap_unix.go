//go:build unix && !linux

package sdk

import "golang.org/x/sys/unix"

// mmapFlags maps partitions shared.
const mmapFlags = unix.MAP_SHARED
