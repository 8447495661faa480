package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A full disk. The journal's storage may refuse a write for lack of space: the
// filesystem is full (ENOSPC), the user's quota is spent (EDQUOT), or the file
// may not grow (EFBIG: a file-size limit). None of these says anything about
// the job being written, and each passes when space returns, so the journal
// treats them as a state of the storage, not as a failure of a write:
//
//   - A write that records progress on an accepted job (a proof, an attempt, a
//     job's end) is kept and retried with backoff until it commits, or until
//     the journal closes (then the partition is still pending in the journal
//     and a restarted daemon proves it again). Its caller waits meanwhile, so
//     the proof it holds is not lost.
//   - A write that would accept new work (CreateJob) fails at once with a
//     NoSpaceError, so the client hears at once that it must come back later.
//   - A reserve file beside the journal holds ReserveBytes of disk. The first
//     space error deletes it, which gives the writes of progress room to
//     commit on a disk that other programs filled. (CockroachDB keeps an
//     "emergency ballast" file for the same reason.)
//   - Until a write commits and the reserve is restored, the journal is short
//     of space: Health says so, WaitWritable blocks (the daemon takes no new
//     partitions), and CreateJob refuses. While short, the committer probes the
//     storage with a small write every few seconds, so the journal recovers by
//     itself when space returns, even with nothing else to write.

// ErrNoSpace: the journal's storage has no space for the write. The errors
// returned wrap it in a *NoSpaceError.
var ErrNoSpace = errors.New("the journal's storage is out of space")

// NoSpaceError says the journal cannot take new work for lack of space, where,
// and how much space it wants.
type NoSpaceError struct {
	// Dir is the journal's directory (the state directory by default).
	Dir string
	// Free is the space free to this user in Dir, Need what the refused write
	// wants free there (bytes).
	Free, Need uint64
	// Cause is the storage error, when a write failed (empty when the space
	// check refused the write before it was tried).
	Cause string
}

func (e *NoSpaceError) Error() string {
	msg := fmt.Sprintf("the journal's directory %s is short of space: %s free, about %s needed", e.Dir, formatBytes(e.Free), formatBytes(e.Need))
	if e.Cause != "" {
		msg += " (" + e.Cause + ")"
	}
	return msg + "; free space there (or raise the quota or file-size limit): accepted jobs go on by themselves when space returns"
}

// Unwrap returns ErrNoSpace.
func (e *NoSpaceError) Unwrap() error { return ErrNoSpace }

// spaceErrnos are the storage errors that mean "no space for this write".
var spaceErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG}

// IsNoSpace reports whether err says storage had no space for a write
// (ENOSPC, EDQUOT or EFBIG). bbolt formats some of its errors with %s (a
// failed file resize), which drops the errno from the chain, so the errno's
// text is matched too.
func IsNoSpace(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrNoSpace) {
		return true
	}
	msg := err.Error()
	for _, e := range spaceErrnos {
		if errors.Is(err, e) || strings.Contains(msg, e.Error()) {
			return true
		}
	}
	return false
}

// Health is the state of the journal's storage.
type Health struct {
	// Dir is the journal's directory.
	Dir string
	// Writable is false while the journal is short of space: from a write's
	// space error until a write commits and the reserve is restored.
	Writable bool
	// Since is when the journal became short of space (zero when writable).
	Since time.Time
	// LastError is the last storage error (kept after recovery).
	LastError string
	// Retries counts writes retried after a space error since the journal opened.
	Retries uint64
	// FreeBytes is the space free to this user in Dir.
	FreeBytes uint64
	// ReserveBytes is the reserve configured; ReserveHeld whether its file holds it now.
	ReserveBytes uint64
	ReserveHeld  bool
}

// spaceKeeper tracks whether the journal's storage takes writes, and keeps the
// reserve file.
type spaceKeeper struct {
	dir         string
	reservePath string
	reserve     uint64

	mu       sync.Mutex
	short    bool
	since    time.Time
	lastErr  string
	retries  uint64
	held     bool
	writable chan struct{} // closed while writable; replaced when short
}

func newSpaceKeeper(journalPath string, reserve uint64) *spaceKeeper {
	s := &spaceKeeper{
		dir:         filepath.Dir(journalPath),
		reservePath: journalPath + ".reserve",
		reserve:     reserve,
		writable:    make(chan struct{}),
	}
	close(s.writable)
	if reserve == 0 {
		// No reserve wanted: a file left by an earlier config goes.
		os.Remove(s.reservePath)
		return s
	}
	if err := s.fillReserve(); err != nil {
		// Opening on a full disk: recovery may still record progress, but new
		// jobs wait for the reserve.
		s.markShort(err)
	}
	return s
}

// fillReserve makes the reserve file hold its size, allocated on disk
// (fallocate, so a sparse file cannot pretend to hold space).
func (s *spaceKeeper) fillReserve() error {
	f, err := os.OpenFile(s.reservePath, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("journal reserve: %w", err)
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, int64(s.reserve))
	if errors.Is(err, unix.EOPNOTSUPP) {
		err = writeZeros(f, s.reserve)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// Leave no half reserve: it would hold space without being counted.
		os.Remove(s.reservePath)
		return fmt.Errorf("journal reserve %s: %w", s.reservePath, err)
	}
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
	return nil
}

func writeZeros(f *os.File, n uint64) error {
	buf := make([]byte, 1<<20)
	for off := uint64(0); off < n; off += uint64(len(buf)) {
		chunk := buf[:min(uint64(len(buf)), n-off)]
		if _, err := f.WriteAt(chunk, int64(off)); err != nil {
			return err
		}
	}
	return nil
}

// releaseReserve deletes the reserve file, giving its space to the journal's
// writes. It reports whether there was a reserve to release.
func (s *spaceKeeper) releaseReserve() bool {
	s.mu.Lock()
	held := s.held
	s.held = false
	s.mu.Unlock()
	if !held {
		return false
	}
	return os.Remove(s.reservePath) == nil
}

// markShort records a space error: the journal is short of space from now.
func (s *spaceKeeper) markShort(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err.Error()
	if !s.short {
		s.short = true
		s.since = time.Now()
		s.writable = make(chan struct{})
	}
}

// recovered is called after a write committed while short: the journal is
// writable again once the reserve is restored.
func (s *spaceKeeper) recovered() bool {
	if !s.isShort() {
		return true
	}
	if s.reserve > 0 && !s.isHeld() {
		if err := s.fillReserve(); err != nil {
			s.mu.Lock()
			s.lastErr = err.Error()
			s.mu.Unlock()
			return false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.short = false
	s.since = time.Time{}
	close(s.writable)
	return true
}

func (s *spaceKeeper) isShort() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.short
}

func (s *spaceKeeper) isHeld() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

func (s *spaceKeeper) retried(n int) {
	s.mu.Lock()
	s.retries += uint64(n)
	s.mu.Unlock()
}

// free returns the space free to this user in the journal's directory.
func (s *spaceKeeper) free() (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(s.dir, &st); err != nil {
		return 0, fmt.Errorf("journal: statfs %s: %w", s.dir, err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

func (s *spaceKeeper) health() Health {
	free, _ := s.free()
	s.mu.Lock()
	defer s.mu.Unlock()
	return Health{
		Dir: s.dir, Writable: !s.short, Since: s.since, LastError: s.lastErr, Retries: s.retries,
		FreeBytes: free, ReserveBytes: s.reserve, ReserveHeld: s.held,
	}
}

// Interrupt makes writes that wait for space, now or later, fail with
// ErrClosed instead of waiting; writes that can commit still do. A daemon that
// stops calls it first, so its goroutines blocked on a full disk end; what
// they would have recorded stays pending in the journal and is done again at
// the next start.
func (j *Journal) Interrupt() { j.w.interrupt() }

// Health returns the state of the journal's storage.
func (j *Journal) Health() Health { return j.space.health() }

// WaitWritable returns when the journal is not short of space (at once, most of
// the time), or with ctx's error when ctx ends first.
func (j *Journal) WaitWritable(ctx context.Context) error {
	j.space.mu.Lock()
	ch := j.space.writable
	j.space.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// admitSlack is what a new job needs free beyond twice its witnesses: bbolt
// writes a changed page to a new place (copy on write), and grows its file in
// steps.
const admitSlack = 1 << 20

// Admit says whether a new job whose witnesses take witnessBytes may be
// accepted: the journal must not be short of space, and the journal's
// directory must have about twice witnessBytes free (the witnesses, and
// bbolt's copy-on-write and growth), beyond the reserve it already holds. It
// returns nil or a *NoSpaceError.
func (j *Journal) Admit(witnessBytes uint64) error {
	need := 2*witnessBytes + admitSlack
	free, err := j.space.free()
	if err != nil {
		return err
	}
	h := j.space.health()
	if !h.Writable {
		return &NoSpaceError{Dir: j.space.dir, Free: free, Need: need + j.space.reserve, Cause: h.LastError}
	}
	if free < need {
		return &NoSpaceError{Dir: j.space.dir, Free: free, Need: need}
	}
	return nil
}

// formatBytes writes n in binary units (the host/api formatter lives above
// this package).
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
