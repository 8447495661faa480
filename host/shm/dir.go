package shm

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
)

// FileSuffix ends the name of every partition file this package writes; ReapStale
// removes only files that carry it.
const FileSuffix = ".partition"

// devShm is where true shared memory is mounted on Linux; a variable so tests can
// take it away.
var devShm = "/dev/shm"

// chunkSize is how much of a section Write copies and hashes per step: small
// enough to stay in cache between the copy and the hash.
const chunkSize = 1 << 20

// validName is what a partition name may look like: a single path element, no
// leading dot, nothing a shell or a log would mangle.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Dir is a private directory of partition files. Its methods may be called
// concurrently.
type Dir struct {
	path string

	mu     sync.RWMutex // Write holds it shared, Close exclusively
	closed bool
}

// NewDir opens the partition directory of the host whose state lives in
// stateDir (DirFor says which), creating it. See OpenDir for the checks.
func NewDir(stateDir string) (*Dir, error) {
	path, err := DirFor(stateDir)
	if err != nil {
		return nil, err
	}
	return OpenDir(path)
}

// DirFor returns the partition directory of the host whose state lives in
// stateDir, without creating it: /dev/shm/zkhost-<uid>-<hash of stateDir's
// absolute path> when /dev/shm is a writable directory, stateDir/shm otherwise.
func DirFor(stateDir string) (string, error) {
	if stateDir == "" {
		return "", errors.New("shm: empty state directory")
	}
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return "", fmt.Errorf("shm: state directory %s: %w", stateDir, err)
	}
	if fi, err := os.Stat(devShm); err == nil && fi.IsDir() && unix.Access(devShm, unix.W_OK) == nil {
		sum := sha256.Sum256([]byte(abs))
		return filepath.Join(devShm, fmt.Sprintf("zkhost-%d-%x", os.Getuid(), sum[:6])), nil
	}
	return filepath.Join(abs, "shm"), nil
}

// OpenDir opens path as a partition directory, creating it (and missing parents)
// with mode 0700. An existing directory must be a real directory (not a
// symbolic link) owned by this process's user; a mode other than 0700 is fixed.
func OpenDir(path string) (*Dir, error) {
	if path == "" {
		return nil, errors.New("shm: empty directory path")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("shm: directory %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("shm: creating the parent of %s: %w", path, err)
	}
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("shm: creating directory %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("shm: directory %s: %w", path, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("shm: %s is not a directory (mode %v); refusing to use it", path, fi.Mode())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("shm: directory %s is owned by uid %d, not by this user (uid %d); refusing to use it", path, st.Uid, os.Getuid())
	}
	// Set the mode even on a directory just created: the umask may have
	// narrowed it.
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(path, 0o700); err != nil {
			return nil, fmt.Errorf("shm: setting mode 0700 on %s: %w", path, err)
		}
	}
	return &Dir{path: path}, nil
}

// Path returns the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// Write writes one BLS12-381 partition to a new file name+FileSuffix with mode
// 0600, laid out by sdk.PartitionLayout, and returns its handle with the SHA-256
// of the whole file. W must hold at least one element; A and B the same number,
// at least one. The name must be new. On any error the file is removed.
func (d *Dir) Write(name string, curve sdk.Curve, W, A, B []fr.Element) (sdk.PartitionHandle, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: directory %s is closed", name, d.path)
	}
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
	wOff, aOff, bOff, size := sdk.PartitionLayout(uint64(len(W)), uint64(len(A)))
	h := sdk.PartitionHandle{
		Path:          filepath.Join(d.path, name+FileSuffix),
		Size:          int64(size),
		Curve:         curve,
		NbWires:       uint64(len(W)),
		NbConstraints: uint64(len(A)),
		WOffset:       wOff,
		AOffset:       aOff,
		BOffset:       bOff,
	}
	f, err := os.OpenFile(h.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %s already exists", name, h.Path)
		}
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %w", name, err)
	}
	digest, err := fillFile(f, h, W, A, B)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(h.Path)
		if errors.Is(err, unix.ENOSPC) {
			return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %d bytes do not fit in %s (for /dev/shm: its size is a mount option; docker's default is 64 MiB): %w", name, size, d.path, err)
		}
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %w", name, err)
	}
	h.Digest = digest
	return h, nil
}

// fillFile is fill; a variable so tests can make it fail.
var fillFile = fill

// fill sizes f for h, writes W, A and B at their offsets and returns the file's
// sdk.PartitionDigest, computed over a mapping of what was written.
func fill(f *os.File, h sdk.PartitionHandle, W, A, B []fr.Element) ([32]byte, error) {
	var digest [32]byte
	// Truncate first: the padding between sections stays a hole that reads as
	// zeros and costs no memory on tmpfs.
	if err := f.Truncate(h.Size); err != nil {
		return digest, err
	}
	for _, s := range []struct {
		off  uint64
		data []byte
	}{{h.WOffset, bytesOf(W)}, {h.AOffset, bytesOf(A)}, {h.BOffset, bytesOf(B)}} {
		for len(s.data) > 0 {
			n := min(len(s.data), chunkSize)
			if _, err := f.WriteAt(s.data[:n], int64(s.off)); err != nil {
				return digest, err
			}
			s.data, s.off = s.data[n:], s.off+uint64(n)
		}
	}
	// Digest the file as the backend will read it, on every core.
	data, err := unix.Mmap(int(f.Fd()), 0, int(h.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return digest, fmt.Errorf("mapping for the digest: %w", err)
	}
	digest = sdk.PartitionDigest(data)
	return digest, unix.Munmap(data)
}

// bytesOf views field elements as their in-memory bytes, the partition format.
func bytesOf(v []fr.Element) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*sdk.ElementSize)
}

// Remove deletes the partition file h names. It refuses a path outside this
// directory; a file already gone is not an error.
func (d *Dir) Remove(h sdk.PartitionHandle) error {
	p := filepath.Clean(h.Path)
	if filepath.Dir(p) != d.path || !strings.HasSuffix(p, FileSuffix) {
		return fmt.Errorf("shm: remove: %s is not a partition file of %s", h.Path, d.path)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("shm: remove: %w", err)
	}
	return nil
}

// ReapStale removes the partition files a previous run left behind (after a
// crash) and returns how many it removed. Call it at start-up, before any Write.
func (d *Dir) ReapStale() (int, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return 0, fmt.Errorf("shm: reap: %w", err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), FileSuffix) {
			continue
		}
		if err := os.Remove(filepath.Join(d.path, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("shm: reap: %w", errors.Join(errs...))
	}
	return n, nil
}

// Close removes the directory and everything in it, waiting for writes in
// progress. Later writes fail; closing twice is not an error.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if err := os.RemoveAll(d.path); err != nil {
		return fmt.Errorf("shm: close: %w", err)
	}
	return nil
}

// Output returns where a synthesizer plugin writes partition name: the handle
// of a new file name+FileSuffix in this directory with the layout of nbWires
// wires and nbConstraints constraints, without a digest (Adopt computes it once
// the file is written). The name must be valid and the file must not exist.
func (d *Dir) Output(name string, curve sdk.Curve, nbWires, nbConstraints uint64) (sdk.PartitionHandle, error) {
	if !validName.MatchString(name) {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output: bad partition name %q (want 1-128 of A-Z a-z 0-9 . _ -, not starting with . _ or -)", name)
	}
	if curve != sdk.CurveBLS12381 {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: curve %q: only %s partitions are supported", name, curve, sdk.CurveBLS12381)
	}
	if nbWires == 0 || nbConstraints == 0 || nbWires > sdk.MaxPartitionElements || nbConstraints > sdk.MaxPartitionElements {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: %d wires and %d constraints, want 1..%d each", name, nbWires, nbConstraints, uint64(sdk.MaxPartitionElements))
	}
	wOff, aOff, bOff, size := sdk.PartitionLayout(nbWires, nbConstraints)
	h := sdk.PartitionHandle{
		Path: filepath.Join(d.path, name+FileSuffix), Size: int64(size), Curve: curve,
		NbWires: nbWires, NbConstraints: nbConstraints, WOffset: wOff, AOffset: aOff, BOffset: bOff,
	}
	if _, err := os.Lstat(h.Path); err == nil {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: %s already exists", name, h.Path)
	}
	return h, nil
}

// Adopt takes in the partition file another process (a synthesizer plugin)
// wrote at out (from Output): it must be a regular file in this directory, not
// a symbolic link, owned by this user, with no permission for group or others,
// of exactly out.Size bytes. Adopt returns out with the digest of the file's
// contents, computed here: the host does not take a digest from the writer.
// On error the file is left for the caller to Remove.
func (d *Dir) Adopt(out sdk.PartitionHandle) (sdk.PartitionHandle, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt %s: directory %s is closed", out.Path, d.path)
	}
	p := filepath.Clean(out.Path)
	if filepath.Dir(p) != d.path || !strings.HasSuffix(p, FileSuffix) {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: %s is not a partition file of %s", out.Path, d.path)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: no partition file at %s", p)
		}
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: %w", err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: %s is not a regular file (mode %v)", p, fi.Mode())
	case fi.Mode().Perm()&0o077 != 0:
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: %s has mode %v, want no access for group and others (0600)", p, fi.Mode().Perm())
	case fi.Size() != out.Size:
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: %s has %d bytes, want %d for %d wires and %d constraints", p, fi.Size(), out.Size, out.NbWires, out.NbConstraints)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: %s is owned by uid %d, not by this user (uid %d)", p, st.Uid, os.Getuid())
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(out.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: mapping %s for its digest: %w", p, err)
	}
	out.Digest = sdk.PartitionDigest(data)
	if err := unix.Munmap(data); err != nil {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: %w", err)
	}
	return out, nil
}

// ReadW returns the first n elements of the wire vector of the partition file h
// names (the constant wire and the public inputs, for a check against the
// submitted witness).
func ReadW(h sdk.PartitionHandle, n int) ([]fr.Element, error) {
	if n < 0 || uint64(n) > h.NbWires {
		return nil, fmt.Errorf("shm: read W of %s: %d elements asked, it has %d", h.Path, n, h.NbWires)
	}
	f, err := os.OpenFile(h.Path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: read W: %w", err)
	}
	defer f.Close()
	out := make([]fr.Element, n)
	if _, err := f.ReadAt(bytesOf(out), int64(h.WOffset)); err != nil {
		return nil, fmt.Errorf("shm: read W of %s: %w", h.Path, err)
	}
	return out, nil
}
