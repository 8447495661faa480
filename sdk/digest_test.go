package sdk

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

// TestPartitionDigest checks the definition against a sequential reimplementation,
// at sizes around the chunk boundary, and that any changed byte changes it.
func TestPartitionDigest(t *testing.T) {
	ref := func(data []byte) [32]byte {
		h := sha256.New()
		h.Write([]byte("zkhost partition digest v1\x00"))
		var l [8]byte
		binary.LittleEndian.PutUint64(l[:], uint64(len(data)))
		h.Write(l[:])
		for off := 0; off < len(data); off += DigestChunk {
			s := sha256.Sum256(data[off:min(len(data), off+DigestChunk)])
			h.Write(s[:])
		}
		var out [32]byte
		h.Sum(out[:0])
		return out
	}
	for _, n := range []int{0, 1, DigestChunk - 1, DigestChunk, DigestChunk + 1, 3*DigestChunk + 17} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		got := PartitionDigest(data)
		if got != ref(data) {
			t.Fatalf("%d bytes: digest differs from the definition", n)
		}
		if n > 0 {
			data[n-1] ^= 1
			if PartitionDigest(data) == got {
				t.Fatalf("%d bytes: flipping the last byte kept the digest", n)
			}
		}
	}
	if PartitionDigest(make([]byte, 5)) == PartitionDigest(make([]byte, 6)) {
		t.Fatal("the length is not bound")
	}
}

func BenchmarkPartitionDigest(b *testing.B) {
	data := make([]byte, 256<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		PartitionDigest(data)
	}
}
