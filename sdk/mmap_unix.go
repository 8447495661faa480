//go:build unix && !linux

package sdk

import (
	"os"

	"golang.org/x/sys/unix"
)

// mmapFlags maps partitions shared.
const mmapFlags = unix.MAP_SHARED

// checkSealed refuses every partition: the host hands partitions over as sealed
// memfds, which this SDK checks on Linux only.
func checkSealed(f *os.File, what, path string) error {
	return Errorf(ErrUnimplemented, "%s %s: sealed files are checked on Linux only", what, path)
}

// clearFile does nothing: partitions are memfds, on Linux only.
func clearFile(f *os.File, size int64) {}
