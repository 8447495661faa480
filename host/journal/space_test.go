package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/host/api"
)

// ownProcessEnv names, in a test binary started by inOwnProcess, the test it
// runs.
const ownProcessEnv = "ZKHOST_JOURNAL_TEST_IN_OWN_PROCESS"

// inOwnProcess runs the calling test again, alone, in a test binary of its
// own, and reports whether this is that process (where the test goes on; the
// caller returns otherwise). A file-size limit (limitFileSize) holds for every
// file of a process, and go test's binary writes a log of its own while its
// tests run (-test.testlogfile, for the test cache): under the limit that
// write fails and fails the package. The child gets no such log.
func inOwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(ownProcessEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), ownProcessEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("%s in a process of its own: %v\n%s", t.Name(), err, out)
	}
	return false
}

// limitFileSize sets this process's RLIMIT_FSIZE soft limit to n bytes until
// the returned function restores it. Past the limit the kernel fails a write or
// a file's growth with EFBIG: the real error path of storage that takes no more
// data, reached without root (a tmpfs of fixed size needs a mount). Go ignores
// the SIGXFSZ that comes with it, so the error reaches the caller. Only in a
// test run by inOwnProcess.
func limitFileSize(t *testing.T, n uint64) (restore func()) {
	t.Helper()
	if os.Getenv(ownProcessEnv) != t.Name() {
		t.Fatal("limitFileSize outside a process of the test's own (inOwnProcess): go test's log would hit the limit")
	}
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: n, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	restore = func() {
		once.Do(func() {
			if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(restore)
	return restore
}

func TestIsNoSpace(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("boom"), false},
		{fmt.Errorf("write: %w", syscall.ENOSPC), true},
		{&os.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, true},
		{fmt.Errorf("file resize error: %s", syscall.EFBIG), true}, // bbolt's grow drops the errno
		{&NoSpaceError{Dir: "/s"}, true},
		{syscall.EIO, false},
	} {
		if got := IsNoSpace(tc.err); got != tc.want {
			t.Errorf("IsNoSpace(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestFullStorageHoldsProgress fills the journal's storage (a file-size limit,
// see limitFileSize) while a job is being proved: a new job is refused with a
// NoSpaceError naming the directory, progress on the accepted job waits instead
// of failing, and when space returns every proof commits, the journal is
// writable by itself (its reserve restored) and takes new jobs again.
func TestFullStorageHoldsProgress(t *testing.T) {
	if !inOwnProcess(t) {
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.db")
	const reserve = 256 << 10
	j, err := OpenWith(path, Options{ReserveBytes: reserve})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if h := j.Health(); !h.Writable || !h.ReserveHeld || h.Dir != dir {
		t.Fatalf("fresh journal: %+v, want writable with its reserve held in %s", h, dir)
	}
	if fi, err := os.Stat(path + ".reserve"); err != nil || fi.Size() != reserve {
		t.Fatalf("reserve file: %v, %v; want %d bytes", fi, err, reserve)
	}
	witness := func(n int) [][]byte {
		ws := make([][]byte, n)
		for i := range ws {
			ws[i] = make([]byte, 64<<10)
			ws[i][0] = byte(i + 1)
		}
		return ws
	}
	const parts = 8
	job, _, err := j.CreateJob(Job{Circuit: "c", RequestID: "first"}, witness(parts))
	if err != nil {
		t.Fatal(err)
	}

	// 32 KiB is eight pages: a job of four 64 KiB witnesses cannot fit, and most
	// pages of the journal (over 512 KiB now) are beyond it.
	restore := limitFileSize(t, 32<<10)
	_, _, err = j.CreateJob(Job{Circuit: "c"}, witness(4))
	var nse *NoSpaceError
	if !errors.As(err, &nse) || !errors.Is(err, ErrNoSpace) {
		t.Fatalf("CreateJob on full storage: %v, want a NoSpaceError", err)
	}
	if nse.Dir != dir || nse.Cause == "" {
		t.Errorf("NoSpaceError %+v: want the directory %s and the storage error", nse, dir)
	}
	// Refusing new work does not spend the reserve: it is for progress.
	h := j.Health()
	if h.Writable || h.Since.IsZero() || !h.ReserveHeld {
		t.Errorf("after a refused job: %+v, want not writable, since set, the reserve still held", h)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := j.WaitWritable(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitWritable while short of space: %v, want it to wait (context canceled)", err)
	}
	if err := j.Admit(1); !errors.As(err, &nse) {
		t.Errorf("Admit while short of space: %v, want a NoSpaceError", err)
	}
	// A retried submission of the accepted job still finds it.
	again, existing, err := j.CreateJob(Job{Circuit: "c", RequestID: "first"}, witness(parts))
	if err != nil || !existing || again.ID != job.ID {
		t.Errorf("retried submission while short of space: %v existing=%v id=%s, want job %s", err, existing, again.ID, job.ID)
	}

	// Progress on the accepted job: each write commits or waits, none fails.
	errs := make(chan error, parts)
	for i := range parts {
		go func() {
			_, err := j.MarkPartitionDone(job.ID, i, []byte(fmt.Sprintf("proof %d", i)), []byte("pub"))
			errs <- err
		}()
	}
	// Wait until the journal has retried at least once, so the writes surely
	// met the full storage, then free it.
	deadline := time.Now().Add(30 * time.Second)
	for j.Health().Retries == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no write was retried within 30s on full storage")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h := j.Health(); h.ReserveHeld {
		t.Errorf("progress retried on full storage, yet the reserve is held: %+v", h)
	}
	if _, err := os.Stat(path + ".reserve"); !os.IsNotExist(err) {
		t.Errorf("reserve file after progress met full storage: %v, want it removed", err)
	}
	restore()
	for range parts {
		if err := <-errs; err != nil {
			t.Errorf("MarkPartitionDone across a full disk: %v", err)
		}
	}
	if err := j.WaitWritable(ctxTimeout(t, 30*time.Second)); err != nil {
		t.Fatalf("journal not writable 30s after space returned: %v (%+v)", err, j.Health())
	}
	if h := j.Health(); !h.Writable || !h.ReserveHeld || h.LastError == "" {
		t.Errorf("after space returned: %+v, want writable, the reserve held, the last error kept", h)
	}
	if err := j.SetJobState(job.ID, api.JobDone, ""); err != nil {
		t.Fatal(err)
	}
	proofs, err := j.Proofs(job.ID)
	if err != nil || len(proofs) != parts {
		t.Fatalf("proofs: %d, %v; want %d", len(proofs), err, parts)
	}
	for i, p := range proofs {
		if string(p.Proof) != fmt.Sprintf("proof %d", i) {
			t.Errorf("proof %d is %q", i, p.Proof)
		}
	}
	if _, _, err := j.CreateJob(Job{Circuit: "c"}, witness(4)); err != nil {
		t.Errorf("CreateJob after space returned: %v", err)
	}
}

// TestCloseWhileShortOfSpace: closing a journal whose writes wait for space
// ends them with ErrClosed (the work stays pending in the journal) instead of
// hanging.
func TestCloseWhileShortOfSpace(t *testing.T) {
	j, _, ok := openInOwnProcess(t)
	if !ok {
		return
	}
	ws := [][]byte{make([]byte, 64<<10), make([]byte, 64<<10)}
	job, _, err := j.CreateJob(Job{Circuit: "c"}, ws)
	if err != nil {
		t.Fatal(err)
	}
	limitFileSize(t, 8<<10)
	done := make(chan error, 1)
	go func() { _, err := j.RecordAttempt(job.ID, 0, string(make([]byte, 32<<10))); done <- err }()
	deadline := time.Now().Add(30 * time.Second)
	for j.Health().Retries == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no write was retried within 30s on full storage")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("write waiting for space at close: %v, want ErrClosed", err)
	}
}

// openInOwnProcess opens a new journal in a test that runs in its own process
// (inOwnProcess); ok is false in the parent process, whose test then returns.
func openInOwnProcess(t *testing.T) (j *Journal, path string, ok bool) {
	t.Helper()
	if !inOwnProcess(t) {
		return nil, "", false
	}
	path = filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return j, path, true
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestOpenOnFullStorage: a daemon restarted (or killed and started again) on a
// full disk opens its journal without writing, reads the jobs it must resume,
// and starts short of space when its reserve cannot be made.
func TestOpenOnFullStorage(t *testing.T) {
	j, path, ok := openInOwnProcess(t)
	if !ok {
		return
	}
	job, _, err := j.CreateJob(Job{Circuit: "c"}, [][]byte{make([]byte, 64<<10), {1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	restore := limitFileSize(t, 4<<10)
	j, err = OpenWith(path, Options{ReserveBytes: 1 << 20})
	if err != nil {
		t.Fatalf("open on full storage: %v", err)
	}
	defer j.Close()
	if h := j.Health(); h.Writable || h.ReserveHeld {
		t.Errorf("opened on full storage: %+v, want short of space without its reserve", h)
	}
	unfinished, err := j.Unfinished()
	if err != nil || len(unfinished) != 1 || unfinished[0].ID != job.ID {
		t.Fatalf("unfinished jobs on full storage: %v, %v", unfinished, err)
	}
	if w, err := j.Witness(job.ID, 0); err != nil || len(w) != 64<<10 {
		t.Fatalf("witness on full storage: %d bytes, %v", len(w), err)
	}
	restore()
	if err := j.WaitWritable(ctxTimeout(t, 30*time.Second)); err != nil {
		t.Fatalf("not writable 30s after space returned: %v (%+v)", err, j.Health())
	}
	if _, err := j.MarkPartitionDone(job.ID, 0, []byte("p"), nil); err != nil {
		t.Fatal(err)
	}
}
