package daemon

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/shm"
)

// TestSizeSynthesis: cores and workers the config leaves are sized to the
// devices, all but a core per device when every circuit is compact; what the
// config gives stays.
func TestSizeSynthesis(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		syn                  config.Synthesis
		compact              bool
		devices              int
		wantCores, wantWorks int
	}{
		{"default, full partitions", config.Synthesis{Cores: 12, Workers: 12}, false, 1, 12, 12},
		{"default, compact, one device", config.Synthesis{Cores: 12, Workers: 12}, true, 1, 15, 15},
		{"default, compact, two devices", config.Synthesis{Cores: 12, Workers: 12}, true, 2, 14, 14},
		{"cores given", config.Synthesis{Cores: 10, Workers: 10, CoresSet: true}, true, 1, 10, 10},
		{"workers given", config.Synthesis{Cores: 12, Workers: 4, WorkersSet: true}, true, 1, 15, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Daemon{cfg: &config.Config{Synthesis: tc.syn}, log: hclog.NewNullLogger(),
				devices: make([]*deviceEntry, tc.devices), circuits: map[string]*circuitEntry{"c": {}}}
			if tc.compact {
				d.circuits["c"].cw = &compactW{}
			}
			d.sizeSynthesis(16)
			if d.synthCores != tc.wantCores || d.synthWorkers != tc.wantWorks {
				t.Fatalf("cores %d, workers %d; want %d and %d", d.synthCores, d.synthWorkers, tc.wantCores, tc.wantWorks)
			}
		})
	}
}

// TestCompactPartitions proves jobs through compact partitions, end to end
// with a real backend (the CPU backend with -compact-w, which evaluates A and
// B from the constraints the daemon sends with the key), on each curve: every
// proof verifies with gnark, each partition file handed off is the compact
// one of its W (its exact size), and a W that breaks a constraint is refused
// by the backend, naming it.
func TestCompactPartitions(t *testing.T) {
	for _, name := range []string{small, smallBN254} {
		t.Run(name, func(t *testing.T) { testCompactPartitions(t, name) })
	}
}

func testCompactPartitions(t *testing.T, name string) {
	f := start(t, opts{compactW: true, circuits: []string{name}})
	ce := f.d.circuits[name]
	if ce.cw == nil || ce.key.Constraints == nil {
		t.Fatalf("circuit %s is not compact with a compact backend", name)
	}
	ctx := testCtx(t, 2*time.Minute)
	ws := witnesses(t, name, 3, 41)
	job := f.await(ctx, f.submit(ctx, name, api.ClassNormal, ws).ID)
	if job.State != api.JobDone {
		t.Fatalf("job %s ended %s: %s", job.ID, job.State, job.Error)
	}
	verifyProofs(t, name, job, ws)

	// Wire assignments, full and compact (what a synthesis host ships), go
	// the compact way too: W alone, parsed into the pooled vector, or a
	// compact one's bitmaps and values copied into the partition; the device
	// evaluates A and B and checks every constraint, so one wrong value
	// fails its partition naming a constraint.
	submit := func(in [][]byte) api.Job {
		t.Helper()
		j, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: name, Assignments: in})
		if err != nil {
			t.Fatal(err)
		}
		return f.await(ctx, j.ID)
	}
	as := assignmentsOf(t, ce.c, ws[:2])
	verifyProofs(t, name, submit(as), ws[:2])
	tampered := slices.Clone(as[1])
	tampered[len(tampered)-1] ^= 1 // the last wire's low bit: still canonical
	bad := submit([][]byte{as[0], tampered})
	if bad.State != api.JobFailed || !strings.Contains(bad.Error, "partition 1") || !strings.Contains(bad.Error, "constraint") {
		t.Errorf("an assignment with a wrong value: job %s, %q; want failed naming partition 1 and a constraint", bad.State, bad.Error)
	}
	compact := compactAssignments(t, ce.c, as)
	verifyProofs(t, name, submit(compact), ws[:2])
	tampered = slices.Clone(compact[1])
	tampered[len(tampered)-1] ^= 1
	bad = submit([][]byte{compact[0], tampered})
	if bad.State != api.JobFailed || !strings.Contains(bad.Error, "partition 1") || !strings.Contains(bad.Error, "constraint") {
		t.Errorf("a compact assignment with a wrong value: job %s, %q; want failed naming partition 1 and a constraint", bad.State, bad.Error)
	}
	// A value past the modulus is found as the values go into the
	// partition: the partition fails naming it, and nothing is kept.
	overflow := slices.Clone(compact[1])
	copy(overflow[len(overflow)-fr.Bytes:], slices.Repeat([]byte{0xff}, fr.Bytes))
	bad = submit([][]byte{overflow})
	id, err := curve.Parse(string(ce.c.Curve))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("is not a canonical %s scalar", curve.Title(id)); bad.State != api.JobFailed || !strings.Contains(bad.Error, want) {
		t.Errorf("a compact assignment with a value past the modulus: job %s, %q; want failed saying %q", bad.State, bad.Error, want)
	}

	// The daemon's own solver never writes a W that breaks a constraint, so
	// the device is asked directly.
	var h sdk.PartitionHandle
	if ce.c.Curve == sdk.CurveBN254 {
		h, err = writeBroken[bnfr.Element](f, ce)
	} else {
		h, err = writeBroken[fr.Element](f, ce)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.d.devices[0].dev.Prove(ctx, ce.key, h)
	if sdk.KindOf(err) != sdk.ErrInvalidArgument || !strings.Contains(err.Error(), "constraint") {
		t.Fatalf("a W that breaks a constraint: %v, want invalid argument naming it", err)
	}
	f.d.shm.Remove(h)

	f.shutdown() // flushes the timeline
	evs, err := timeline.ReadFile(f.cfg.Timeline.Path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, full := sdk.PartitionLayout(uint64(ce.c.NbWires), uint64(ce.c.NbConstraints))
	staged := 0
	for _, ev := range evs {
		if ev.Job != job.ID || ev.Phase != timeline.PhaseStage {
			continue
		}
		staged++
		// The compact file of the partition's W: its bitmaps and the values
		// neither 0 nor 1 (a 1 is the curve's own), nothing of A and B.
		want := compactSize(t, ce, ws[ev.Partition])
		if ev.Bytes != want || ev.Bytes >= full {
			t.Errorf("partition %d handed off %d bytes; its compact file is %d, a full one %d", ev.Partition, ev.Bytes, want, full)
		}
	}
	if staged != len(ws) {
		t.Errorf("%d stage events, want %d", staged, len(ws))
	}
}

// writeBroken writes a compact partition of ce whose W (1 then 0s) breaks a
// constraint, on the circuit's curve's scalars S.
func writeBroken[S ~[4]uint64, PS curve.Scalar[S]](f *fixture, ce *circuitEntry) (sdk.PartitionHandle, error) {
	w := make([]S, ce.c.NbWires)
	PS(&w[0]).SetOne()
	return shm.WriteCompact[S, PS](f.d.shm, "broken", w, uint64(ce.c.NbConstraints), 1)
}

// compactSize is the size of the compact partition of ce's witness in: its
// W solved here, packed with the curve's 1.
func compactSize(t *testing.T, ce *circuitEntry, in []byte) uint64 {
	t.Helper()
	words := sdk.CompactWords(uint64(ce.c.NbWires))
	other, bits := make([]uint64, words), make([]uint64, words)
	var nbOther uint64
	var err error
	if ce.c.Curve == sdk.CurveBN254 {
		_, nbOther, err = circuit.SynthesizeInputCompact(ce.c, in, 1, make([]bnfr.Element, ce.c.NbWires), other, bits)
	} else {
		_, nbOther, err = circuit.SynthesizeInputCompact(ce.c, in, 1, make([]fr.Element, ce.c.NbWires), other, bits)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, size := sdk.CompactLayout(uint64(ce.c.NbWires), nbOther)
	return size
}
