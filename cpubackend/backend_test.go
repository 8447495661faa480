package cpubackend

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

func TestParseCPUModel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\nmodel name\t: other\n", "AMD EPYC 9654 96-Core Processor"},
		{"processor\t: 0\nBogoMIPS\t: 50.00\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := parseCPUModel(strings.NewReader(tt.in)); got != tt.want {
			t.Errorf("parseCPUModel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		total, free uint64
		wantErr     bool
	}{
		{"available", "MemTotal:       16384 kB\nMemFree:         1024 kB\nMemAvailable:    8192 kB\n", 16384 << 10, 8192 << 10, false},
		{"old kernel", "MemTotal:       16384 kB\nMemFree:         1024 kB\n", 16384 << 10, 1024 << 10, false},
		{"no total", "MemFree:         1024 kB\n", 0, 0, true},
		{"garbage", "MemTotal:       lots kB\n", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total, free, err := parseMeminfo(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if total != tt.total || free != tt.free {
				t.Errorf("got %d, %d; want %d, %d", total, free, tt.total, tt.free)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	for _, tt := range []struct {
		opts        Options
		maxInFlight int
	}{
		{Options{}, 1},
		{Options{Threads: 2, MaxInFlight: 3}, 3},
	} {
		d, err := New(tt.opts).Describe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != Name || d.Version == "" || d.Device.Kind != "cpu" || d.Device.Model == "" || !d.Device.Available {
			t.Errorf("description %+v", d)
		}
		if d.Device.MemoryTotal == 0 || d.Device.MemoryFree > d.Device.MemoryTotal {
			t.Errorf("memory total %d, free %d", d.Device.MemoryTotal, d.Device.MemoryFree)
		}
		if !slices.Contains(d.Curves, sdk.CurveBLS12381) || !slices.Contains(d.APIVersions, sdk.APIVersion) {
			t.Errorf("curves %v, API versions %v", d.Curves, d.APIVersions)
		}
		if d.MaxInFlight != tt.maxInFlight {
			t.Errorf("MaxInFlight %d, want %d", d.MaxInFlight, tt.maxInFlight)
		}
		if d.HostBytesPerConstraint == 0 || d.DeviceBytesPerConstraint != 0 {
			t.Errorf("bytes per constraint: host %d, device %d", d.HostBytesPerConstraint, d.DeviceBytesPerConstraint)
		}
	}
}

func TestLoadKeyIdempotent(t *testing.T) {
	f := chainFixture(t)
	b := New(Options{})
	defer b.Close()
	ctx := context.Background()
	info, err := b.LoadKey(ctx, f.keyRef("chain"))
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(f.keySize) + refprover.DomainBytes(f.domain); info.HostBytes != want || info.DeviceBytes != 0 {
		t.Errorf("KeyInfo %+v, want HostBytes %d (file and FFT domain)", info, want)
	}
	again, err := b.LoadKey(ctx, f.keyRef("chain"))
	if err != nil || again != info {
		t.Errorf("second load: %+v, %v; want %+v", again, err, info)
	}
	other := f.keyRef("chain")
	other.Digest[0] ^= 1
	if _, err := b.LoadKey(ctx, other); sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Errorf("same ID, other digest: err %v, want invalid_argument", err)
	}
	if _, err := b.LoadKey(ctx, f.keyRef("chain-2")); err != nil {
		t.Errorf("the same file under a second ID: %v", err)
	}
	if err := b.UnloadKey(ctx, "chain"); err != nil {
		t.Fatal(err)
	}
	if err := b.UnloadKey(ctx, "chain"); err != nil {
		t.Errorf("unloading twice: %v", err)
	}
	if _, err := b.LoadKey(ctx, other); sdk.KindOf(err) != sdk.ErrDigestMismatch {
		t.Errorf("after unload, other digest: err %v, want digest_mismatch (the file's digest differs)", err)
	}
}

func TestLoadKeyErrors(t *testing.T) {
	f := chainFixture(t)
	ctx := context.Background()

	// A copy of the key with one byte of a point section flipped: the header (and so
	// its digest) is intact, the section digest is not.
	data, err := os.ReadFile(f.keyPath)
	if err != nil {
		t.Fatal(err)
	}
	kf, err := keyfile.Open(f.keyPath)
	if err != nil {
		t.Fatal(err)
	}
	first := kf.Sections()[0]
	kf.Close()
	data[first.Offset+5] ^= 1 // a coordinate of α: Open does not read points, Verify must catch it
	corrupt := filepath.Join(t.TempDir(), "corrupt.zkpk")
	if err := os.WriteFile(corrupt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	notKey := filepath.Join(t.TempDir(), "not-a-key")
	if err := os.WriteFile(notKey, bytes.Repeat([]byte{7}, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	wrongDigest := f.keyRef("k")
	wrongDigest.Digest[31] ^= 1
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name      string
		ctx       context.Context
		ref       sdk.KeyRef
		want      sdk.ErrorKind
		maxDomain uint64 // Options.MaxDomain
	}{
		{"digest mismatch", ctx, wrongDigest, sdk.ErrDigestMismatch, 0},
		{"corrupt section", ctx, sdk.KeyRef{ID: "k", Path: corrupt, Digest: f.keyDigest}, sdk.ErrDigestMismatch, 0},
		{"missing file", ctx, sdk.KeyRef{ID: "k", Path: filepath.Join(t.TempDir(), "nope"), Digest: f.keyDigest}, sdk.ErrInvalidArgument, 0},
		{"not a key file", ctx, sdk.KeyRef{ID: "k", Path: notKey, Digest: f.keyDigest}, sdk.ErrInvalidArgument, 0},
		{"empty ID", ctx, sdk.KeyRef{Path: f.keyPath, Digest: f.keyDigest}, sdk.ErrInvalidArgument, 0},
		{"empty path", ctx, sdk.KeyRef{ID: "k", Digest: f.keyDigest}, sdk.ErrInvalidArgument, 0},
		{"cancelled", cancelled, f.keyRef("k"), sdk.ErrCanceled, 0},
		// Refused for good: the host must not ask this backend again.
		{"above -max-domain", ctx, f.keyRef("k"), sdk.ErrResourceExhausted, 1},
	}
	// With workers, the key's worker starts while the file is checked: a
	// failed check must still leave no worker behind.
	for _, mode := range []struct {
		name string
		opts Options
	}{{"in-process", Options{}}, {"worker", Options{WorkerPath: testExecutable(t)}}} {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				opts := mode.opts
				opts.MaxDomain = tt.maxDomain
				b := New(opts)
				defer b.Close()
				_, err := b.LoadKey(tt.ctx, tt.ref)
				if err == nil || sdk.KindOf(err) != tt.want {
					t.Fatalf("err = %v, want kind %v", err, tt.want)
				}
				if tt.maxDomain > 0 && sdk.IsRetryable(err) {
					t.Errorf("err = %v is retryable; a key above -max-domain is refused for good", err)
				}
				if n := len(b.keys.IDs()); n != 0 {
					t.Errorf("a failed load left %d keys", n)
				}
				if kids := workerChildren(t); len(kids) != 0 {
					t.Errorf("a failed load left workers %v", kids)
				}
			})
		}
	}
}

// loadedChain returns the chain fixture and a backend made with opts (closed when
// the test ends) with the fixture's key loaded as "chain".
func loadedChain(t *testing.T, opts Options) (*fixture, *Backend) {
	t.Helper()
	f := chainFixture(t)
	b := New(opts)
	t.Cleanup(func() { b.Close() })
	if _, err := b.LoadKey(context.Background(), f.keyRef("chain")); err != nil {
		t.Fatal(err)
	}
	return f, b
}

// verifyResult decodes and verifies a ProveResult against the fixture.
func verifyResult(t *testing.T, f *fixture, res sdk.ProveResult) {
	t.Helper()
	if err := checkProof(t, f, res); err != nil {
		t.Fatalf("proof does not verify: %v", err)
	}
}

// checkProof decodes res's proof (failing the test if it cannot) and returns
// gnark's verdict on it against the fixture.
func checkProof(t *testing.T, f *fixture, res sdk.ProveResult) error {
	t.Helper()
	proof := groth16.NewProof(ecc.BLS12_381)
	if _, err := proof.ReadFrom(bytes.NewReader(res.Proof)); err != nil {
		t.Fatalf("decoding the proof: %v", err)
	}
	return groth16.Verify(proof, f.vk, f.public)
}

func TestProveVerifies(t *testing.T) {
	f, b := loadedChain(t, Options{Threads: 2})
	ctx := context.Background()
	res, err := b.Prove(ctx, sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
	if err != nil {
		t.Fatal(err)
	}
	verifyResult(t, f, res)

	names := []string{}
	var sum time.Duration
	for i, p := range res.Phases {
		names = append(names, p.Name)
		sum += p.DeviceBusy
		if p.Wall <= 0 || p.DeviceBusy > p.Wall || p.Start+p.Wall > res.Wall {
			t.Errorf("phase %+v outside the call's %v", p, res.Wall)
		}
		// Phases follow each other, but for the G2 MSM, which runs beside the G1 MSMs.
		if i > 0 && p.Name != sdk.PhaseMSMG2 && p.Name != sdk.PhaseFinish && p.Start < res.Phases[i-1].Start+res.Phases[i-1].Wall {
			t.Errorf("phase %s starts before %s ends", p.Name, res.Phases[i-1].Name)
		}
		if p.Name == sdk.PhaseFinish {
			for _, q := range res.Phases[:i] {
				if p.Start < q.Start+q.Wall {
					t.Errorf("finish starts before %s ends", q.Name)
				}
			}
		}
	}
	want := []string{sdk.PhaseMap, sdk.PhaseNTT, sdk.PhaseMSMG1, sdk.PhaseMSMG2, sdk.PhaseFinish}
	if !slices.Equal(names, want) {
		t.Errorf("phases %v, want %v", names, want)
	}
	if res.DeviceBusy != sum || res.DeviceBusy <= 0 || res.DeviceBusy > res.Wall {
		t.Errorf("DeviceBusy %v (phases sum to %v), wall %v", res.DeviceBusy, sum, res.Wall)
	}
}

func TestProveWrongWitnessDoesNotVerify(t *testing.T) {
	// The check above can fail: a partition that does not satisfy the circuit gives a
	// proof that gnark rejects.
	f, b := loadedChain(t, Options{})
	ctx := context.Background()
	w := slices.Clone(f.solution.W)
	w[len(w)-1].SetUint64(99)
	res, err := b.Prove(ctx, sdk.ProveRequest{KeyID: "chain", Partition: writePartition(t, w, f.solution.A, f.solution.B)})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkProof(t, f, res); err == nil {
		t.Fatal("a proof of a tampered witness verifies")
	}
}

func TestProveErrors(t *testing.T) {
	f, b := loadedChain(t, Options{})
	ctx := context.Background()
	good := f.partition(t)
	shortW := writePartition(t, f.solution.W[:len(f.solution.W)-1], f.solution.A, f.solution.B)
	tooMany := writePartition(t, f.solution.W, make([]fr.Element, f.domain+1), make([]fr.Element, f.domain+1))
	otherInode := good
	otherInode.Inode++
	badOffset := good
	badOffset.AOffset += 4096
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name string
		ctx  context.Context
		req  sdk.ProveRequest
		want sdk.ErrorKind
	}{
		{"unknown key", ctx, sdk.ProveRequest{KeyID: "nope", Partition: good}, sdk.ErrKeyNotLoaded},
		{"wires differ from the key", ctx, sdk.ProveRequest{KeyID: "chain", Partition: shortW}, sdk.ErrInvalidArgument},
		{"more constraints than the domain", ctx, sdk.ProveRequest{KeyID: "chain", Partition: tooMany}, sdk.ErrInvalidArgument},
		{"partition inode", ctx, sdk.ProveRequest{KeyID: "chain", Partition: otherInode}, sdk.ErrInvalidArgument},
		{"partition layout", ctx, sdk.ProveRequest{KeyID: "chain", Partition: badOffset}, sdk.ErrInvalidArgument},
		{"cancelled", cancelled, sdk.ProveRequest{KeyID: "chain", Partition: good}, sdk.ErrCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			begin := time.Now()
			_, err := b.Prove(tt.ctx, tt.req)
			if err == nil || sdk.KindOf(err) != tt.want {
				t.Fatalf("err = %v, want kind %v", err, tt.want)
			}
			if d := time.Since(begin); d > time.Second {
				t.Errorf("refusal took %v", d)
			}
		})
	}
	if n := b.keys.InFlight(); n != 0 {
		t.Errorf("%d proofs still counted in flight", n)
	}
	// The backend still proves after all those refusals.
	res, err := b.Prove(ctx, sdk.ProveRequest{KeyID: "chain", Partition: good})
	if err != nil {
		t.Fatal(err)
	}
	verifyResult(t, f, res)
}

func TestProveCancelWhileWaitingForCPU(t *testing.T) {
	f, b := loadedChain(t, Options{MaxInFlight: 2})
	b.device <- struct{}{} // another proof holds the CPU
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := b.Prove(ctx, sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
	<-b.device
	if sdk.KindOf(err) != sdk.ErrCanceled {
		t.Fatalf("err = %v, want canceled", err)
	}
}

func TestProveMaxInFlight(t *testing.T) {
	f, b := loadedChain(t, Options{MaxInFlight: 1})
	lease, err := b.keys.Acquire("chain") // one proof in flight
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
	lease.Release()
	if sdk.KindOf(err) != sdk.ErrResourceExhausted || !sdk.IsRetryable(err) {
		t.Fatalf("err = %v, want a retryable resource_exhausted", err)
	}
}

func TestUnloadWaitsForRunningProofs(t *testing.T) {
	f, b := loadedChain(t, Options{})
	ctx := context.Background()
	lease, err := b.keys.Acquire("chain") // a proof is using the key
	if err != nil {
		t.Fatal(err)
	}
	k := lease.Key()
	if err := b.UnloadKey(ctx, "chain"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Prove(ctx, sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)}); sdk.KindOf(err) != sdk.ErrKeyNotLoaded {
		t.Errorf("prove after unload: err %v, want key_not_loaded", err)
	}
	if err := k.file.Verify(); err != nil {
		t.Fatalf("the key was unmapped under a running proof: %v", err)
	}
	lease.Release()
	if err := k.file.Verify(); err == nil {
		t.Fatal("the key is still mapped after its last proof returned")
	}
}

func TestConcurrentProves(t *testing.T) {
	f, b := loadedChain(t, Options{MaxInFlight: 2})
	ctx := context.Background()
	handles := []sdk.PartitionHandle{f.partition(t), f.partition(t)}
	results := make([]sdk.ProveResult, len(handles))
	errs := make([]error, len(handles))
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Go(func() { results[i], errs[i] = b.Prove(ctx, sdk.ProveRequest{KeyID: "chain", Partition: h}) })
	}
	wg.Go(func() { _, _ = b.Describe(ctx) })
	wg.Wait()
	for i := range handles {
		if errs[i] != nil {
			t.Fatalf("proof %d: %v", i, errs[i])
		}
		verifyResult(t, f, results[i])
	}
}
