//go:build !linux

package sdk

import (
	"errors"
	"os"
	"syscall"
)

// setParentDeathSignal does nothing outside Linux: the poll in WatchParent is
// the only mechanism there.
func setParentDeathSignal() {}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
