//go:build linux

package shm

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
)

// BenchmarkHandoff measures a partition's way from the host's vectors to a
// backend's mapping, at 2^20 and 2^22 constraints (as many wires: the chain
// circuit's shape), both sides in this process:
//
//   - sealed (API 2, what zkhost does): host Write (memfd, pwrite, seal), backend
//     sdk.OpenPartition (open through /proc, fstat, F_GET_SEALS, mmap).
//   - hashed (API 1, the peer): host writes a file in /dev/shm and hashes it with
//     the chunked SHA-256 on every core; the backend opens, maps pre-faulted and
//     hashes it again. This is the code zkhost ran before (sdk/shm/dir.go and
//     sdk/digest.go at 0f02992), kept here only as the benchmark's peer.
//
// host_ms and backend_ms split each iteration; the backend's share is what the
// device waits for when the partition is not staged ahead.
func BenchmarkHandoff(b *testing.B) {
	for _, logN := range []int{20, 22} {
		n := 1 << logN
		W, A, B := cheapVector(n), cheapVector(n), cheapVector(n)
		b.Run(fmt.Sprintf("sealed/2^%d", logN), func(b *testing.B) {
			s := NewStore()
			defer s.Close()
			var host, backend time.Duration
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				h, err := s.Write(fmt.Sprintf("bench-%d", i), sdk.CurveBLS12381, W, A, B)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				p, err := sdk.OpenPartition(h)
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				host, backend = host+t1.Sub(t0), backend+t2.Sub(t1)
				b.SetBytes(h.Size)
				b.StopTimer()
				p.Close()
				s.Remove(h)
				b.StartTimer()
			}
			report(b, host, backend)
		})
		b.Run(fmt.Sprintf("hashed/2^%d", logN), func(b *testing.B) {
			dir, err := os.MkdirTemp("/dev/shm", "zkhost-bench-")
			if err != nil {
				b.Fatalf("no writable /dev/shm for the hashed peer: %v", err)
			}
			defer os.RemoveAll(dir)
			var host, backend time.Duration
			b.ResetTimer()
			for i := range b.N {
				path := filepath.Join(dir, fmt.Sprintf("bench-%d.partition", i))
				t0 := time.Now()
				size, digest := hashedWrite(b, path, W, A, B)
				t1 := time.Now()
				data := hashedOpen(b, path, size, digest)
				t2 := time.Now()
				host, backend = host+t1.Sub(t0), backend+t2.Sub(t1)
				b.SetBytes(size)
				b.StopTimer()
				unix.Munmap(data)
				os.Remove(path)
				b.StartTimer()
			}
			report(b, host, backend)
		})
	}
}

func report(b *testing.B, host, backend time.Duration) {
	b.ReportMetric(float64(host.Microseconds())/1e3/float64(b.N), "host_ms/op")
	b.ReportMetric(float64(backend.Microseconds())/1e3/float64(b.N), "backend_ms/op")
}

// cheapVector returns n distinct elements without the cost of random ones (the
// handoff does not look at the values).
func cheapVector(n int) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		v[i] = fr.Element{uint64(i), uint64(i) * 3, uint64(i) * 7, 1}
	}
	return v
}

// hashedWrite is the API 1 host side: the partition file written with pwrite,
// then mapped and digested.
func hashedWrite(b *testing.B, path string, W, A, B []fr.Element) (int64, [32]byte) {
	wOff, aOff, bOff, size := sdk.PartitionLayout(uint64(len(W)), uint64(len(A)))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		b.Fatal(err)
	}
	for _, sec := range []struct {
		off  uint64
		data []byte
	}{{wOff, bytesOf(W)}, {aOff, bytesOf(A)}, {bOff, bytesOf(B)}} {
		for len(sec.data) > 0 {
			n := min(len(sec.data), 1<<20)
			if _, err := f.WriteAt(sec.data[:n], int64(sec.off)); err != nil {
				b.Fatal(err)
			}
			sec.data, sec.off = sec.data[n:], sec.off+uint64(n)
		}
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(data)
	return int64(size), chunkedSHA256(data)
}

// hashedOpen is the API 1 backend side: open, map pre-faulted, digest, compare.
func hashedOpen(b *testing.B, path string, size int64, digest [32]byte) []byte {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		b.Fatal(err)
	}
	if chunkedSHA256(data) != digest {
		b.Fatal("digest mismatch")
	}
	return data
}

// chunkedSHA256 is API 1's sdk.PartitionDigest: SHA-256 over a tag, the length
// and the SHA-256 of each 4 MiB chunk, the chunks hashed on every core.
func chunkedSHA256(data []byte) [32]byte {
	const chunk = 4 << 20
	n := (len(data) + chunk - 1) / chunk
	sums := make([][32]byte, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := range next {
				sums[i] = sha256.Sum256(data[i*chunk : min(len(data), (i+1)*chunk)])
			}
		})
	}
	wg.Wait()
	h := sha256.New()
	h.Write([]byte("zkhost partition digest v1\x00"))
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(data)))
	h.Write(l[:])
	for i := range sums {
		h.Write(sums[i][:])
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
