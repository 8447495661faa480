package sdk

import (
	"os"

	"golang.org/x/sys/unix"
)

// mmapFlags maps partitions shared, without MAP_POPULATE: pre-faulting costs
// about what faulting on first touch does (BENCHMARKS.md, "The partition
// handoff"), and first touch happens where the
// data is used, on the threads that use it (the CPU backend's prove worker,
// which maps the file again), not in the map phase. A backend that copies the
// partition anyway reads it instead (ReadPartition) and builds no page table.
const mmapFlags = unix.MAP_SHARED

// RequiredSeals are the seals OpenPartition requires of a partition file: with
// them no process can write, shrink or grow it, so its bytes stay the ones the
// host wrote for as long as the file exists.
const RequiredSeals = unix.F_SEAL_WRITE | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW

// checkSealed refuses a file that lacks one of RequiredSeals with ErrUnsealed. A
// file that cannot carry seals at all (on disk, or a tmpfs file made with open)
// is refused the same way.
func checkSealed(f *os.File, what, path string) error {
	seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	if err != nil {
		return Errorf(ErrUnsealed, "%s %s: cannot carry seals (%v): it must be a sealed memfd", what, path, err)
	}
	if missing := RequiredSeals &^ seals; missing != 0 {
		return Errorf(ErrUnsealed, "%s %s: seals %s, missing %s: its bytes could change while it is used", what, path, sealNames(seals), sealNames(missing))
	}
	return nil
}

// sealNames spells a seal set as fcntl(2) names them.
func sealNames(seals int) string {
	var s string
	for _, n := range []struct {
		bit  int
		name string
	}{
		{unix.F_SEAL_SEAL, "F_SEAL_SEAL"},
		{unix.F_SEAL_SHRINK, "F_SEAL_SHRINK"},
		{unix.F_SEAL_GROW, "F_SEAL_GROW"},
		{unix.F_SEAL_WRITE, "F_SEAL_WRITE"},
		{unix.F_SEAL_FUTURE_WRITE, "F_SEAL_FUTURE_WRITE"},
	} {
		if seals&n.bit != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// clearFile punches f's first size bytes back to a hole (zeros, no memory
// held), for WritePartition to leave nothing of a partition it failed to write.
func clearFile(f *os.File, size int64) {
	_ = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, size)
}
