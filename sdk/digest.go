package sdk

import (
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"sync"
)

// DigestChunk is the chunk size of PartitionDigest.
const DigestChunk = 4 << 20

// PartitionDigest is the digest a PartitionHandle carries: SHA-256 over a domain
// tag, the data's length and the SHA-256 of each DigestChunk-byte chunk in order
// (the last chunk may be shorter). It is as strong as a plain SHA-256 of the
// file, but its chunks hash in parallel on every core: one SHA-256 stream over a
// 2^21-constraint partition cost the CUDA backend more time than the GPU's whole
// proof (BENCHMARKS.md, full prove on the H200, runs 2 and 3).
func PartitionDigest(data []byte) [32]byte {
	n := (len(data) + DigestChunk - 1) / DigestChunk
	sums := make([][32]byte, n)
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				end := min(len(data), (i+1)*DigestChunk)
				sums[i] = sha256.Sum256(data[i*DigestChunk : end])
			}
		}()
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
