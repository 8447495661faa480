//go:build linux

package shm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
)

// chunkSize is how much of a section Write copies per system call.
const chunkSize = 4 << 20

// seals are what Write adds once the partition is written: sdk.RequiredSeals,
// and F_SEAL_SEAL so no seal can be added or taken away later.
const seals = sdk.RequiredSeals | unix.F_SEAL_SEAL

// validName is what a partition name may look like: nothing a log would mangle.
// The name shows in /proc as the memfd's ("/memfd:NAME (deleted)").
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Store holds the host's partitions, one sealed memfd each, and the outputs
// that synthesizer plugins are writing (output.go). Its methods may be called
// concurrently.
type Store struct {
	pid int

	mu      sync.Mutex
	files   map[uint64]*os.File // sealed partitions, by inode, which the handle carries
	pending map[uint64]output   // outputs not yet adopted, by inode
	closed  bool
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{pid: os.Getpid(), files: make(map[uint64]*os.File), pending: make(map[uint64]output)}
}

// Write writes one BLS12-381 partition into a new memfd, laid out by
// sdk.PartitionLayout, seals it and returns its handle. W must hold at least one
// element; A and B the same number, at least one. The partition stays until
// Remove or Close; on any error nothing is kept.
func (s *Store) Write(name string, curve sdk.Curve, W, A, B []fr.Element) (sdk.PartitionHandle, error) {
	if !validName.MatchString(name) {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write: bad partition name %q (want 1-128 of A-Z a-z 0-9 . _ -, not starting with . _ or -)", name)
	}
	if curve != sdk.CurveBLS12381 {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: curve %q: only %s partitions are supported", name, curve, sdk.CurveBLS12381)
	}
	switch {
	case len(W) == 0:
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: W is empty (a circuit has at least the constant wire)", name)
	case len(A) == 0:
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: A is empty (no constraints)", name)
	case len(A) != len(B):
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: len(A) = %d but len(B) = %d", name, len(A), len(B))
	}
	if s.isClosed() {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: the store is closed", name)
	}
	wOff, aOff, bOff, size := sdk.PartitionLayout(uint64(len(W)), uint64(len(A)))
	h := sdk.PartitionHandle{
		Size:          int64(size),
		Curve:         curve,
		NbWires:       uint64(len(W)),
		NbConstraints: uint64(len(A)),
		WOffset:       wOff,
		AOffset:       aOff,
		BOffset:       bOff,
	}
	f, err := memfd("zkhost-" + name)
	if err != nil {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %w", name, err)
	}
	if err := fillFile(f, h, W, A, B); err != nil {
		f.Close()
		if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.ENOSPC) {
			return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %d bytes do not fit in memory (or the memory cgroup's limit): %w", name, size, err)
		}
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %w", name, err)
	}
	if err := s.keep("write", name, f, &h, func() { s.files[h.Inode] = f }); err != nil {
		return sdk.PartitionHandle{}, err
	}
	return h, nil
}

// keep completes h with f's inode and path and runs add, which files f in the
// store, under the store's lock. It closes f and fails if the store was closed
// meanwhile; op names the caller in errors.
func (s *Store) keep(op, name string, f *os.File, h *sdk.PartitionHandle, add func()) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return fmt.Errorf("shm: %s %q: %w", op, name, err)
	}
	h.Inode = uint64(st.Ino)
	h.Path = s.path(f)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		f.Close()
		return fmt.Errorf("shm: %s %q: the store was closed meanwhile", op, name)
	}
	add()
	return nil
}

// memfd creates an empty memfd that can be sealed and is not inherited by the
// processes the host starts (backends open it through /proc instead). Kernels
// since 6.3 also take MFD_NOEXEC_SEAL (the file can never be made executable,
// and they warn about a memfd created without saying); older ones refuse the
// flag, and get the memfd without it.
func memfd(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_NOEXEC_SEAL)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	return os.NewFile(uintptr(fd), "memfd:"+name), nil
}

// fillFile is fill; a variable so tests can make it fail.
var fillFile = fill

// fill sizes f for h, writes W, A and B at their offsets and seals f. The chunks
// are written by up to fillWriters goroutines at once: a memfd's pages are
// allocated and zeroed as they are first written, and one thread doing that for a
// large partition takes a share of the synthesis it follows worth spreading
// (BENCHMARKS.md, "Feeding the GPU"). Deliberately parallel to the SDK's
// fillPartition, which cuts the same sections into chunks but writes them one
// after another (a synthesizer's WritePartition): a chunking helper the two
// could share would be an exported function of the SDK, a public API, for
// one caller.
func fill(f *os.File, h sdk.PartitionHandle, W, A, B []fr.Element) error {
	// Truncate first: the padding between sections stays a hole that reads as
	// zeros and costs no memory.
	if err := f.Truncate(h.Size); err != nil {
		return err
	}
	type chunk struct {
		off  int64
		data []byte
	}
	var chunks []chunk
	for _, sec := range []struct {
		off  uint64
		data []byte
	}{{h.WOffset, bytesOf(W)}, {h.AOffset, bytesOf(A)}, {h.BOffset, bytesOf(B)}} {
		for len(sec.data) > 0 {
			n := min(len(sec.data), chunkSize)
			chunks = append(chunks, chunk{int64(sec.off), sec.data[:n]})
			sec.data, sec.off = sec.data[n:], sec.off+uint64(n)
		}
	}
	writers := min(fillWriters, runtime.GOMAXPROCS(0), len(chunks))
	next := make(chan chunk)
	errs := make(chan error, writers)
	for range writers {
		go func() {
			var first error
			for c := range next {
				if first == nil {
					_, first = f.WriteAt(c.data, c.off)
				}
			}
			errs <- first
		}()
	}
	for _, c := range chunks {
		next <- c
	}
	close(next)
	var err error
	for range writers {
		err = errors.Join(err, <-errs)
	}
	if err != nil {
		return err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		return fmt.Errorf("sealing: %w", err)
	}
	return nil
}

// fillWriters bounds the goroutines fill writes with.
const fillWriters = 8

// bytesOf views field elements as their in-memory bytes, the partition format.
func bytesOf(v []fr.Element) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*sdk.ElementSize)
}

// Remove closes the memfd of the partition h names, or of an output not yet
// adopted; its memory is freed once no backend (or synthesizer) maps it any
// more. A partition already removed is not an error; a handle this store did
// not make is.
func (s *Store) Remove(h sdk.PartitionHandle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[h.Inode]
	if !ok {
		o, pending := s.pending[h.Inode]
		if !pending {
			return nil
		}
		f = o.f
	}
	if want := s.path(f); h.Path != want {
		return fmt.Errorf("shm: remove: handle %s (inode %d) is not this store's partition %s", h.Path, h.Inode, want)
	}
	delete(s.files, h.Inode)
	delete(s.pending, h.Inode)
	if err := f.Close(); err != nil {
		return fmt.Errorf("shm: remove: %w", err)
	}
	return nil
}

// path is how other processes reach the memfd f: the host's descriptor in /proc.
func (s *Store) path(f *os.File) string {
	return fmt.Sprintf("/proc/%d/fd/%d", s.pid, f.Fd())
}

// Len returns how many partitions the store holds, outputs not yet adopted
// included.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files) + len(s.pending)
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close removes every partition and pending output. Later writes and outputs
// fail; closing twice is not an error.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for ino, f := range s.files {
		if err := f.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(s.files, ino)
	}
	for ino, o := range s.pending {
		if err := o.f.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(s.pending, ino)
	}
	if len(errs) > 0 {
		return fmt.Errorf("shm: close: %w", errors.Join(errs...))
	}
	return nil
}

// Held returns the names of the partitions process pid holds open (its
// descriptors of memfds this package made, as /proc shows them), for checks
// that none leaked. A process that is gone holds none.
func Held(pid int) ([]string, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("shm: held: %w", err)
	}
	var names []string
	for _, e := range entries {
		target, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if name, ok := strings.CutPrefix(target, "/memfd:zkhost-"); ok {
			names = append(names, strings.TrimSuffix(name, " (deleted)"))
		}
	}
	return names, nil
}
