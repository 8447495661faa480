package gpu

import (
	"time"

	"github.com/zkhost/zkhost/sdk/keyfile"
)

// Groth16Timing is the device-busy time of one proof's phases, from CUDA events
// on its stream.
//
// The G2 MSM runs on a second stream beside H and the G1 MSMs, from MSMG2Start;
// Total is the span from the first event to the last on either stream, the
// device-busy time of the proof.
type Groth16Timing struct {
	Upload     time.Duration // W, A, B to the device
	NTT        time.Duration // H, after the upload
	MSMG1      time.Duration // the four G1 MSMs, after H
	MSMG2Start time.Duration // when the G2 MSM started, from the first event
	MSMG2      time.Duration // the G2 MSM
	Total      time.Duration // first event to last
}

// KeyDeviceBytes is the device memory a proving key takes once uploaded: G1 A
// and B and G2 B expanded to every wire, G1 K and Z as they are.
func KeyDeviceBytes(pk *keyfile.ProvingKey) uint64 {
	return pk.NbWires*(96+96+192) + uint64(len(pk.G1K)+len(pk.G1Z))*96
}

// SlotDeviceBytes is the device memory one slot (Groth16Slot) holds for a
// domain of 2^logN and nwires wires: W, A, B and C.
func SlotDeviceBytes(logN uint32, nwires int) uint64 {
	return (uint64(nwires) + 3*(uint64(1)<<logN)) * FrBytes
}

// SlotHostBytes is the pinned host memory one slot holds: the staging of W, A
// and B.
func SlotHostBytes(logN uint32, nwires int) uint64 {
	return (uint64(nwires) + 2*(uint64(1)<<logN)) * FrBytes
}

// PartitionDeviceBytes is the device memory one proof in flight needs beyond its
// key and its slot, for a domain of 2^logN and nwires wires: the MSM's digits,
// sort keys and buckets (about 64 bytes per scalar of the largest MSM) and a
// fixed allowance. An estimate, used for admission.
func PartitionDeviceBytes(logN uint32, nwires int) uint64 {
	n := uint64(1) << logN
	return 64*max(n, uint64(nwires)) + 64<<20
}
