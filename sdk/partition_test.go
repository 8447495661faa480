package sdk

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk/testcircuit"
)

func TestPartitionLayout(t *testing.T) {
	tests := []struct {
		nbW, nbC               uint64
		wOff, aOff, bOff, size uint64
	}{
		{1, 1, 0, 4096, 8192, 12288},
		{128, 128, 0, 4096, 8192, 12288},  // exactly one page each
		{129, 128, 0, 8192, 12288, 16384}, // W spills into a second page
		{128, 129, 0, 4096, 12288, 20480}, // A and B spill
		{1000, 1 << 12, 0, 32768, 163840, 294912},
	}
	for _, tc := range tests {
		w, a, b, s := PartitionLayout(tc.nbW, tc.nbC)
		if w != tc.wOff || a != tc.aOff || b != tc.bOff || s != tc.size {
			t.Errorf("PartitionLayout(%d, %d) = %d, %d, %d, %d; want %d, %d, %d, %d",
				tc.nbW, tc.nbC, w, a, b, s, tc.wOff, tc.aOff, tc.bOff, tc.size)
		}
		for _, off := range []uint64{a, b, s} {
			if off%PartitionAlign != 0 {
				t.Errorf("PartitionLayout(%d, %d): %d is not aligned", tc.nbW, tc.nbC, off)
			}
		}
		if a < w+tc.nbW*ElementSize || b < a+tc.nbC*ElementSize || s < b+tc.nbC*ElementSize {
			t.Errorf("PartitionLayout(%d, %d): sections overlap", tc.nbW, tc.nbC)
		}
	}
}

// writeTestPartition writes a partition by the layout into a memfd sealed with
// seals, independently of package sdk/shm, and returns its handle. The memfd
// is closed when the test ends.
func writeTestPartition(t testing.TB, seals int, W, A, B []fr.Element) PartitionHandle {
	t.Helper()
	wOff, aOff, bOff, size := PartitionLayout(uint64(len(W)), uint64(len(A)))
	buf := make([]byte, size)
	raw := func(v []fr.Element) []byte {
		return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*ElementSize)
	}
	copy(buf[wOff:], raw(W))
	copy(buf[aOff:], raw(A))
	copy(buf[bOff:], raw(B))
	path, ino := testMemfd(t, seals, buf)
	return PartitionHandle{
		Path: path, Inode: ino, Size: int64(size), Curve: CurveBLS12381,
		NbWires: uint64(len(W)), NbConstraints: uint64(len(A)),
		WOffset: wOff, AOffset: aOff, BOffset: bOff,
	}
}

// testMemfd returns the /proc path and inode of a new memfd holding data and
// sealed with seals, closed when the test ends. Deliberately parallel to
// sdktest's unsealedCopy: package sdk's own tests cannot import sdktest,
// which imports sdk.
func testMemfd(t testing.TB, seals int, data []byte) (string, uint64) {
	t.Helper()
	fd, err := unix.MemfdCreate("sdk-test", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "sdk-test")
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if seals != 0 {
		if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
			t.Fatal(err)
		}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd), st.Ino
}

func equalVectors(a, b []fr.Element) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(&b[i]) {
			return false
		}
	}
	return true
}

func TestOpenPartition(t *testing.T) {
	W, A, B := testcircuit.RandomVector(t, 300), testcircuit.RandomVector(t, 200), testcircuit.RandomVector(t, 200)
	h := writeTestPartition(t, RequiredSeals, W, A, B)
	p, err := OpenPartition(h)
	if err != nil {
		t.Fatal(err)
	}
	if !equalVectors(p.W(), W) || !equalVectors(p.A(), A) || !equalVectors(p.B(), B) {
		t.Fatal("the mapped vectors differ from the written ones")
	}
	if got := len(p.Bytes(SectionA)); got != 200*ElementSize {
		t.Errorf("len(Bytes(A)) = %d, want %d", got, 200*ElementSize)
	}
	if p.Bytes(Section(7)) != nil {
		t.Error("Bytes of an unknown section is not nil")
	}
	if p.Handle() != h {
		t.Error("Handle() differs from the handle opened")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if p.W() != nil {
		t.Error("W() after Close is not nil")
	}
}

// TestReadPartition reads partitions whose sections span several of
// ReadPartition's pieces (and end inside one) with 1, 3 and 8 readers (and 0,
// which reads with one), and refuses destinations of the wrong length by name,
// reading nothing.
func TestReadPartition(t *testing.T) {
	const piece = readChunk / ElementSize
	W, A, B := testcircuit.RandomVector(t, 2*piece+5), testcircuit.RandomVector(t, piece+1), testcircuit.RandomVector(t, piece+1)
	h := writeTestPartition(t, RequiredSeals, W, A, B)
	for _, threads := range []int{1, 3, 8, 0} {
		w, a, b := make([]fr.Element, len(W)), make([]fr.Element, len(A)), make([]fr.Element, len(B))
		if err := ReadPartition(h, w, a, b, threads); err != nil {
			t.Fatalf("%d readers: %v", threads, err)
		}
		if !equalVectors(w, W) || !equalVectors(a, A) || !equalVectors(b, B) {
			t.Fatalf("%d readers: the vectors read differ from the written ones", threads)
		}
	}
	for _, tc := range []struct {
		name       string
		nw, na, nb int
	}{
		{"W", len(W) - 1, len(A), len(B)},
		{"A", len(W), len(A) + 1, len(B)},
		{"B", len(W), len(A), 0},
	} {
		w, a, b := make([]fr.Element, tc.nw), make([]fr.Element, tc.na), make([]fr.Element, tc.nb)
		err := ReadPartition(h, w, a, b, 2)
		if KindOf(err) != ErrInternal || !strings.Contains(err.Error(), tc.name+"'s destination") {
			t.Errorf("a %s destination of the wrong length: %v, want ErrInternal naming it", tc.name, err)
		}
		for _, v := range [][]fr.Element{w, a, b} {
			if len(v) > 0 && !v[0].IsZero() {
				t.Errorf("a %s destination of the wrong length: a vector was read into before the refusal", tc.name)
			}
		}
	}
}

func TestOpenPartitionRejects(t *testing.T) {
	dir := t.TempDir()
	W, A, B := testcircuit.RandomVector(t, 10), testcircuit.RandomVector(t, 20), testcircuit.RandomVector(t, 20)
	good := writeTestPartition(t, RequiredSeals, W, A, B)
	data, err := os.ReadFile(good.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Files with the good layout and contents that are not sealed (or not
	// entirely), and one sealed but a page short.
	handleOf := func(path string, ino uint64) func(h *PartitionHandle) {
		return func(h *PartitionHandle) { h.Path, h.Inode = path, ino }
	}
	unsealedPath, unsealedIno := testMemfd(t, 0, data)
	noWritePath, noWriteIno := testMemfd(t, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL, data)
	noGrowPath, noGrowIno := testMemfd(t, unix.F_SEAL_WRITE|unix.F_SEAL_SHRINK, data)
	futurePath, futureIno := testMemfd(t, unix.F_SEAL_FUTURE_WRITE|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW, data)
	shortPath, shortIno := testMemfd(t, RequiredSeals, data[:len(data)-PartitionAlign])
	onDisk := filepath.Join(dir, "p.partition")
	if err := os.WriteFile(onDisk, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(onDisk, &st); err != nil {
		t.Fatal(err)
	}
	onDiskIno := st.Ino
	sub := filepath.Join(dir, "dir.partition")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(sub, &st); err != nil {
		t.Fatal(err)
	}
	subIno := st.Ino

	tests := []struct {
		name   string
		modify func(h *PartitionHandle)
		kind   ErrorKind
		substr string
	}{
		{"unknown curve", func(h *PartitionHandle) { h.Curve = "p-256" }, ErrInvalidArgument, "unknown curve"},
		{"no wires", func(h *PartitionHandle) { h.NbWires = 0 }, ErrInvalidArgument, "nb_wires"},
		{"no constraints", func(h *PartitionHandle) { h.NbConstraints = 0 }, ErrInvalidArgument, "nb_constraints"},
		{"huge", func(h *PartitionHandle) { h.NbConstraints = 1 << 62 }, ErrInvalidArgument, "nb_constraints"},
		{"w offset", func(h *PartitionHandle) { h.WOffset = 32 }, ErrInvalidArgument, "w_offset"},
		{"a offset", func(h *PartitionHandle) { h.AOffset += 4096 }, ErrInvalidArgument, "a_offset"},
		{"b offset", func(h *PartitionHandle) { h.BOffset -= 32 }, ErrInvalidArgument, "b_offset"},
		{"size", func(h *PartitionHandle) { h.Size += 4096 }, ErrInvalidArgument, "size"},
		{"negative size", func(h *PartitionHandle) { h.Size = -1 }, ErrInvalidArgument, "size"},
		{"more wires than written", func(h *PartitionHandle) { h.NbWires = 300 }, ErrInvalidArgument, "a_offset"},
		{"relative path", func(h *PartitionHandle) { h.Path = "p.partition" }, ErrInvalidArgument, "not absolute"},
		{"missing file", func(h *PartitionHandle) { h.Path = filepath.Join(dir, "nope") }, ErrInvalidArgument, "no such file"},
		{"directory", handleOf(sub, subIno), ErrInvalidArgument, "not a regular file"},
		{"another inode", func(h *PartitionHandle) { h.Inode++ }, ErrInvalidArgument, "not the file it names"},
		{"file too short", handleOf(shortPath, shortIno), ErrInvalidArgument, "bytes"},
		{"unsealed memfd", handleOf(unsealedPath, unsealedIno), ErrUnsealed, "missing F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_WRITE"},
		{"no write seal", handleOf(noWritePath, noWriteIno), ErrUnsealed, "missing F_SEAL_WRITE"},
		{"no grow seal", handleOf(noGrowPath, noGrowIno), ErrUnsealed, "missing F_SEAL_GROW"},
		// F_SEAL_FUTURE_WRITE leaves writable mappings made before it in place.
		{"future write seal only", handleOf(futurePath, futureIno), ErrUnsealed, "missing F_SEAL_WRITE"},
		{"file on disk", handleOf(onDisk, onDiskIno), ErrUnsealed, "cannot carry seals"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := good
			tc.modify(&h)
			p, err := OpenPartition(h)
			if err == nil {
				p.Close()
				t.Fatal("OpenPartition accepted a bad handle")
			}
			// ReadPartition checks the same, before it reads into anything.
			w, a, b := make([]fr.Element, len(W)), make([]fr.Element, len(A)), make([]fr.Element, len(B))
			rerr := ReadPartition(h, w, a, b, 2)
			if rerr == nil {
				t.Fatal("ReadPartition accepted a bad handle")
			}
			for _, e := range []error{err, rerr} {
				if KindOf(e) != tc.kind {
					t.Errorf("kind %v, want %v (%v)", KindOf(e), tc.kind, e)
				}
				if !strings.Contains(e.Error(), tc.substr) {
					t.Errorf("error %q does not mention %q", e, tc.substr)
				}
			}
		})
	}
}

// BenchmarkOpenPartition measures the map phase of a backend: open, check the
// seals and map a 2^20-constraint partition (96 MiB).
func BenchmarkOpenPartition(b *testing.B) {
	const n = 1 << 20
	W, A, B := testcircuit.RandomVector(b, n), testcircuit.RandomVector(b, n), testcircuit.RandomVector(b, n)
	h := writeTestPartition(b, RequiredSeals, W, A, B)
	b.SetBytes(h.Size)
	b.ResetTimer()
	for range b.N {
		p, err := OpenPartition(h)
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

// BenchmarkMapTouch compares the two ways a backend's first pass over a mapped
// 2^20-constraint partition (96 MiB) gets its page table: MAP_POPULATE in the
// mmap call, or faults on first touch (what OpenPartition leaves to its caller).
// Each iteration maps, reads one byte per page, unmaps.
func BenchmarkMapTouch(b *testing.B) {
	const n = 1 << 20
	v := make([]fr.Element, n)
	h := writeTestPartition(b, RequiredSeals, v, v, v)
	f, err := os.Open(h.Path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for _, m := range []struct {
		name  string
		flags int
	}{{"populate", unix.MAP_SHARED | unix.MAP_POPULATE}, {"fault", unix.MAP_SHARED}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(h.Size)
			var sum byte
			for range b.N {
				data, err := unix.Mmap(int(f.Fd()), 0, int(h.Size), unix.PROT_READ, m.flags)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(data); i += PartitionAlign {
					sum += data[i]
				}
				unix.Munmap(data)
			}
			if sum != 0 {
				b.Fatal("the partition of zeros read non-zero")
			}
		})
	}
}

// BenchmarkStagePartition compares the two ways a backend can copy a partition
// into memory of its own (the CUDA backend's pinned staging), with 4 threads as
// it uses: map it (OpenPartition) and copy out of the mapping, paying its page
// table on first touch, or ReadPartition's reads. Chain-shaped partitions:
// 2^k constraints and as many wires (96 MiB at 2^20, 384 MiB at 2^22).
func BenchmarkStagePartition(b *testing.B) {
	const threads = 4
	for _, k := range []int{20, 22} {
		n := 1 << k
		W, A, B := testcircuit.RandomVector(b, n), testcircuit.RandomVector(b, n), testcircuit.RandomVector(b, n)
		h := writeTestPartition(b, RequiredSeals, W, A, B)
		w, a, bb := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
		b.Run(fmt.Sprintf("map+copy/n=2^%d", k), func(b *testing.B) {
			b.SetBytes(h.Size)
			for range b.N {
				p, err := OpenPartition(h)
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range []struct{ dst, src []fr.Element }{{w, p.W()}, {a, p.A()}, {bb, p.B()}} {
					copyParallel(c.dst, c.src, threads)
				}
				p.Close()
			}
		})
		b.Run(fmt.Sprintf("read/n=2^%d", k), func(b *testing.B) {
			b.SetBytes(h.Size)
			for range b.N {
				if err := ReadPartition(h, w, a, bb, threads); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// copyParallel copies src into dst in 4 MiB pieces over threads goroutines (the
// CUDA backend's staging copy before ReadPartition: gpu.parallelCopy, which
// this module cannot import).
func copyParallel(dst, src []fr.Element, threads int) {
	const piece = readChunk / ElementSize
	var wg sync.WaitGroup
	for t := range threads {
		wg.Go(func() {
			for lo := t * piece; lo < len(src); lo += threads * piece {
				copy(dst[lo:min(len(src), lo+piece)], src[lo:min(len(src), lo+piece)])
			}
		})
	}
	wg.Wait()
}
