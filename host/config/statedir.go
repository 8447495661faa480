package config

import (
	"fmt"
	"os"
	"syscall"
)

// PrepareStateDir creates the state directory (mode 0700) when missing and
// checks one that exists. The directory holds the journal (private witnesses),
// the API socket and the backends' sockets, so nobody else may write in it. A
// shared directory (sticky and writable by others: mode 1777, as /tmp) is
// refused; one of ours that group or others may write in is tightened to 0700
// (tightened is true, for the caller to report); one of another user's that
// others may write in is refused, since tightening it is not ours to do.
func PrepareStateDir(dir string) (tightened bool, err error) {
	if dir == "" {
		return false, fmt.Errorf("state directory: no path")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("state directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return false, fmt.Errorf("state directory: %w", err)
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("state directory %s is not a directory", dir)
	}
	perm := fi.Mode().Perm()
	if perm&0o022 == 0 {
		return false, nil
	}
	if fi.Mode()&os.ModeSticky != 0 {
		// Sticky and writable by others is a directory meant to be shared
		// (/tmp): tightening it would break its other users, even as its owner.
		return false, fmt.Errorf("state directory %s (mode %s) is a shared directory that other users may write in; set state_dir to a directory of your own (it is created with mode 0700)",
			dir, fi.Mode().String())
	}
	owner := -1
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		owner = int(st.Uid)
	}
	if owner != os.Geteuid() {
		return false, fmt.Errorf("state directory %s (mode %s, owner uid %d) may be written by other users and is not ours to tighten; set state_dir to a directory of your own (it is created with mode 0700)",
			dir, fi.Mode().String(), owner)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return false, fmt.Errorf("state directory %s has mode %s, which lets other users write in it, and cannot be tightened: %w", dir, fi.Mode().String(), err)
	}
	return true, nil
}
