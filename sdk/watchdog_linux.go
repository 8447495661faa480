//go:build linux

package sdk

import (
	"errors"

	"golang.org/x/sys/unix"
)

// setParentDeathSignal asks the kernel to send SIGTERM when the parent dies. A
// failure is ignored: the poll in WatchParent still notices the death.
func setParentDeathSignal() {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
}

// processAlive reports whether a process with this pid exists (a zombie counts
// as existing; the getppid check covers that case).
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
