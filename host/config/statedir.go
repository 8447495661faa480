package config

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
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

// journalRoom is what the journal's filesystem must have free beside the
// reserve when the daemon starts: bbolt's first growth and a small first job
// (the journal admits a job with twice its witnesses and 1 MiB free).
const journalRoom = 1 << 20

// fsSpace is what statfs says of a filesystem, in bytes: its size, and what
// is free to an unprivileged user.
type fsSpace struct{ total, free uint64 }

func statSpace(dir string) (fsSpace, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fsSpace{}, err
	}
	return fsSpace{total: st.Blocks * uint64(st.Bsize), free: st.Bavail * uint64(st.Bsize)}, nil
}

// CheckJournalSpace checks, before the daemon starts, that the filesystem the
// journal at journalPath lives on (the state directory's, by default) can
// hold its reserve (reserve bytes, [journal] reserve) and a first job. A
// daemon that started without would say "serving" and refuse every job.
//
// A reserve larger than the whole filesystem is an error. Too little free
// space is an error on a first start (no journal yet), and only a warning,
// for the caller to log, when a journal is already there: a daemon restarted
// on a full disk must still resume the jobs it accepted (it refuses new ones
// until space returns). A reserve file an earlier run left counts as free,
// since it holds the reserve already.
func CheckJournalSpace(journalPath string, reserve uint64) (warning string, err error) {
	return checkJournalSpace(journalPath, reserve, statSpace)
}

func checkJournalSpace(journalPath string, reserve uint64, stat func(string) (fsSpace, error)) (string, error) {
	// The state directory may not exist yet (it is created at start): its
	// nearest existing parent is on the filesystem it will be on.
	dir := filepath.Dir(journalPath)
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	sp, err := stat(dir)
	if err != nil {
		return "", fmt.Errorf("journal directory %s: free space: %w", dir, err)
	}
	if reserve > sp.total {
		return "", fmt.Errorf("journal.reserve: %s is more than the whole filesystem of %s holds (%s); lower [journal] reserve (\"0\" keeps none), or put state_dir (or journal.path) on a larger filesystem",
			FormatBytes(reserve), dir, FormatBytes(sp.total))
	}
	var held uint64
	if st, err := os.Stat(journalPath + ".reserve"); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			held = min(uint64(sys.Blocks)*512, reserve) // allocated blocks: a sparse file holds nothing
		}
	}
	if sp.free+held >= reserve+journalRoom {
		return "", nil
	}
	short := fmt.Sprintf("%s has %s free", dir, FormatBytes(sp.free))
	if held > 0 {
		short += fmt.Sprintf(" and %s in the journal's reserve file", FormatBytes(held))
	}
	short += fmt.Sprintf(", less than [journal] reserve (%s) and room for a first job (%s)", FormatBytes(reserve), FormatBytes(journalRoom))
	if _, err := os.Stat(journalPath); err == nil {
		return short + ": jobs already accepted resume, new jobs are refused until space returns", nil
	}
	return "", fmt.Errorf("journal.reserve: %s: the daemon would start and refuse every job; free space there, lower [journal] reserve (\"0\" keeps none), or put state_dir (or journal.path) on a larger filesystem", short)
}
