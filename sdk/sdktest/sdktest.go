package sdktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	hclog "github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/internal/logbuf"
	"github.com/zkhost/zkhost/sdk/plugins"
	"github.com/zkhost/zkhost/sdk/shm"
)

// Config says which backend Run checks and with what.
type Config struct {
	// BackendPath is the backend binary under test.
	BackendPath string
	// SHA256, Args and Env are used as the host uses them (plugins.Launch).
	SHA256 []byte
	Args   []string
	Env    []string
	// KeyDir holds the example circuits' keys in sdk/circuit's layout; missing keys
	// are generated into it (test binaries sharing it take turns). Empty means a
	// per-user folder in the system's temporary directory, kept between runs.
	KeyDir string
	// ChainK is log2 of the constraints of the chain circuit proven (default 10).
	ChainK int
	// MerkleDepth and MerkleLeaves size the merkle circuit proven (defaults 8 and 2,
	// about 3000 constraints).
	MerkleDepth, MerkleLeaves int
	// CancelChainK is log2 of the constraints of the chain circuit whose Prove is
	// cancelled. Zero (the default) chooses it from the backend's measured speed: the
	// smallest size whose proof takes about CancelTarget, at most MaxCancelChainK. The
	// check runs at whatever size it gets: it passes or fails, it never skips.
	CancelChainK int
	// CancelTarget is how long the cancelled proof should take uncancelled, so that a
	// proof that stops is told from one that runs on despite a loaded machine's noise
	// (default 1.5 s).
	CancelTarget time.Duration
	// MaxCancelChainK bounds the size chosen for CancelChainK, and so the time its key
	// takes to generate once (default 18).
	MaxCancelChainK int
	// StartTimeout bounds the backend's start (default one minute).
	StartTimeout time.Duration
	// Logger receives the backend's logs. Nil keeps them and prints them when the
	// suite fails.
	Logger hclog.Logger
}

func (c Config) withDefaults() Config {
	if c.ChainK == 0 {
		c.ChainK = 10
	}
	if c.MerkleDepth == 0 {
		c.MerkleDepth = 8
	}
	if c.MerkleLeaves == 0 {
		c.MerkleLeaves = 2
	}
	if c.CancelTarget == 0 {
		c.CancelTarget = 1500 * time.Millisecond
	}
	if c.MaxCancelChainK == 0 {
		c.MaxCancelChainK = 18
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = time.Minute
	}
	return c
}

// fixture is one example circuit with its keys loaded on the host side.
type fixture struct {
	spec circuits.Spec
	c    *circuit.Circuit
	key  sdk.KeyRef
}

// suite is the state the checks share.
type suite struct {
	cfg     Config
	proc    *plugins.Process
	backend sdk.Backend
	store   *shm.Store
	desc    sdk.Description

	mu    sync.Mutex
	names int // partition file counter
}

// Run launches cfg.BackendPath and runs the conformance checks as subtests of t.
// Under -short the Cancel check, which needs a larger circuit, is skipped.
func Run(t *testing.T, cfg Config) {
	cfg = cfg.withDefaults()
	if cfg.BackendPath == "" {
		t.Fatal("sdktest: Config.BackendPath is empty")
	}
	if cfg.KeyDir == "" {
		cfg.KeyDir = filepath.Join(os.TempDir(), "zkhost-sdktest-keys-"+strconv.Itoa(os.Getuid()))
	}
	s := &suite{cfg: cfg}

	logger := cfg.Logger
	if logger == nil {
		logger = logbuf.LoggerForTest(t, "backend")
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartTimeout)
	proc, err := plugins.Launch(ctx, plugins.LaunchConfig{
		Kind: plugins.KindBackend, Path: cfg.BackendPath, SHA256: cfg.SHA256, Args: cfg.Args, Env: cfg.Env,
		Logger: logger, StartTimeout: cfg.StartTimeout,
	})
	cancel()
	if err != nil {
		t.Fatalf("launching the backend: %v", err)
	}
	t.Cleanup(proc.Kill)
	s.proc, s.backend = proc, proc.Backend()

	s.store = shm.NewStore()
	t.Cleanup(func() { s.store.Close() })

	if !t.Run("Describe", s.testDescribe) {
		return
	}
	if !s.desc.Device.Available {
		t.Run("Unavailable", s.testUnavailable)
		t.Logf("the backend's device is unavailable (%s): the proving checks are skipped", s.desc.Device.Reason)
		return
	}
	chain := s.fixture(t, "chain", map[string]int{"k": cfg.ChainK})
	merkle := s.fixture(t, "merkle", map[string]int{"d": cfg.MerkleDepth, "k": cfg.MerkleLeaves})

	t.Run("LoadKey", func(t *testing.T) { s.testLoadKey(t, chain, merkle) })
	t.Run("Prove", func(t *testing.T) { s.testProve(t, chain, merkle) })
	t.Run("BadRequests", func(t *testing.T) { s.testBadRequests(t, chain, merkle) })
	t.Run("Compact", func(t *testing.T) { s.testCompact(t, chain, merkle) }) // compact.go
	t.Run("BN254", func(t *testing.T) { s.testBN254(t, chain) })             // curves.go
	t.Run("Cancel", func(t *testing.T) {
		if testing.Short() {
			t.Skip("skipped under -short: it needs a larger circuit")
		}
		s.testCancel(t, chain)
	})
	if proc.Exited() {
		t.Error("the backend process exited during the suite")
	}
}

// fixture loads an example circuit's keys from KeyDir, generating them first when
// they are missing, and loads the key into the backend.
func (s *suite) fixture(t *testing.T, name string, params map[string]int) *fixture {
	t.Helper()
	spec, err := circuits.Lookup(name, params)
	if err != nil {
		t.Fatal(err)
	}
	c, err := loadOrGenerate(s.cfg.KeyDir, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	f := &fixture{spec: spec, c: c, key: sdk.KeyRef{ID: c.Name, Path: c.PKPath, Digest: c.PKDigest}}
	if _, err := s.backend.LoadKey(context.Background(), f.key); err != nil {
		t.Fatalf("LoadKey(%s): %v", f.key.ID, err)
	}
	return f
}

// loadOrGenerate loads spec's keys from keyDir, running Keygen first when they
// are missing (loadOrMake).
func loadOrGenerate(keyDir string, spec circuits.Spec) (*circuit.Circuit, error) {
	return loadOrMake(keyDir, spec.ID(), func() error {
		if err := circuit.Keygen(spec, keyDir); err != nil {
			return fmt.Errorf("generating keys for %s: %w", spec.ID(), err)
		}
		return nil
	})
}

// loadOrMake loads key set name from keyDir, calling make first when its metadata
// file (written last) is missing. A lock file serializes test binaries that share
// keyDir.
func loadOrMake(keyDir, name string, make func() error) (*circuit.Circuit, error) {
	if err := os.MkdirAll(keyDir, 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(keyDir, ".sdktest.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return nil, fmt.Errorf("locking %s: %w", keyDir, err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	_, _, _, meta := circuit.Paths(keyDir, name)
	if _, err := os.Stat(meta); errors.Is(err, os.ErrNotExist) {
		if err := make(); err != nil {
			return nil, err
		}
	}
	return circuit.Load(keyDir, name)
}

// partition synthesizes partition i of f's circuit and writes it to shared memory.
// It returns the handle and the public witness to verify the proof with.
func (s *suite) partition(t *testing.T, f *fixture, i int) (sdk.PartitionHandle, witness.Witness) {
	t.Helper()
	w, err := f.spec.Witness(i, 0)
	if err != nil {
		t.Fatal(err)
	}
	W, A, B, err := circuit.Synthesize(f.c, w, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.store.Write(s.partitionName(f, "", i), sdk.CurveBLS12381, W, A, B)
	return s.kept(t, h, err), public(t, w)
}

// partitionName names partition i of f's circuit, kind ("" or "compact")
// and a counter making it unique.
func (s *suite) partitionName(f *fixture, kind string, i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names++
	if kind != "" {
		kind += "-"
	}
	return f.c.Name + "-" + kind + strconv.Itoa(i) + "-" + strconv.Itoa(s.names)
}

// kept fails t on a write's error, else removes h when t ends and returns it.
func (s *suite) kept(t *testing.T, h sdk.PartitionHandle, err error) sdk.PartitionHandle {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.store.Remove(h) })
	return h
}

// public is w's public part.
func public(t *testing.T, w witness.Witness) witness.Witness {
	t.Helper()
	pub, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// prove proves h with f's key and checks the proof with groth16.Verify.
func (s *suite) prove(ctx context.Context, f *fixture, h sdk.PartitionHandle, pub witness.Witness) (sdk.ProveResult, error) {
	res, err := s.backend.Prove(ctx, sdk.ProveRequest{KeyID: f.key.ID, Partition: h})
	if err != nil {
		return res, fmt.Errorf("Prove(%s): %w", h.Path, err)
	}
	proof := groth16.NewProof(f.c.VK.CurveID())
	if _, err := proof.ReadFrom(bytes.NewReader(res.Proof)); err != nil {
		return res, fmt.Errorf("Prove(%s): the proof does not decode as a gnark %s proof: %w", h.Path, curve.Title(f.c.VK.CurveID()), err)
	}
	if err := groth16.Verify(proof, f.c.VK, pub); err != nil {
		return res, fmt.Errorf("Prove(%s): the proof does not verify: %w", h.Path, err)
	}
	if err := checkTimings(res); err != nil {
		return res, fmt.Errorf("Prove(%s): %w", h.Path, err)
	}
	return res, nil
}

// checkTimings checks that a result's timings are plausible.
func checkTimings(r sdk.ProveResult) error {
	if r.Wall <= 0 {
		return fmt.Errorf("Wall is %v, want a positive duration", r.Wall)
	}
	if r.DeviceBusy < 0 {
		return fmt.Errorf("DeviceBusy is %v", r.DeviceBusy)
	}
	for _, p := range r.Phases {
		if p.Name == "" || p.Start < 0 || p.Wall < 0 || p.DeviceBusy < 0 {
			return fmt.Errorf("phase %+v: want a name and non-negative durations", p)
		}
		if p.Start > r.Wall {
			return fmt.Errorf("phase %s starts at %v, after the request's wall time %v", p.Name, p.Start, r.Wall)
		}
	}
	return nil
}

func (s *suite) testDescribe(t *testing.T) {
	d, err := s.backend.Describe(context.Background())
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	s.desc = d
	t.Logf("backend %s %s, device %s %q (available %v), max in flight %d", d.Name, d.Version, d.Device.Kind, d.Device.Model, d.Device.Available, d.MaxInFlight)
	if d.Name == "" {
		t.Error("Name is empty")
	}
	if !slices.Contains(d.APIVersions, sdk.APIVersion) {
		t.Errorf("APIVersions %v do not include %d", d.APIVersions, sdk.APIVersion)
	}
	if d.MaxInFlight < 1 {
		t.Errorf("MaxInFlight is %d, want at least 1", d.MaxInFlight)
	}
	if !slices.Contains(d.Curves, sdk.CurveBLS12381) {
		t.Errorf("Curves %v do not include %s", d.Curves, sdk.CurveBLS12381)
	}
	if d.Device.Kind == "" {
		t.Error("Device.Kind is empty")
	}
	if !d.Device.Available && d.Device.Reason == "" {
		t.Error("the device is unavailable and Device.Reason does not say why")
	}
	if d.Device.MemoryFree > d.Device.MemoryTotal {
		t.Errorf("Device.MemoryFree %d exceeds MemoryTotal %d", d.Device.MemoryFree, d.Device.MemoryTotal)
	}
}

// testUnavailable checks that a backend without a device refuses to prove.
func (s *suite) testUnavailable(t *testing.T) {
	h := sdk.PartitionHandle{Path: "/proc/self/fd/none", Curve: sdk.CurveBLS12381}
	_, err := s.backend.Prove(context.Background(), sdk.ProveRequest{KeyID: "none", Partition: h})
	if sdk.KindOf(err) != sdk.ErrUnavailable {
		t.Errorf("Prove on an unavailable device: %v, want an error of kind %v", err, sdk.ErrUnavailable)
	}
}

// wantKind checks that err is an *sdk.Error of one of kinds that is not retryable
// (these errors are the request's fault: retrying cannot help).
func wantKind(t *testing.T, what string, err error, kinds ...sdk.ErrorKind) {
	t.Helper()
	var e *sdk.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v, want an *sdk.Error of kind %v", what, err, kinds)
		return
	}
	if !slices.Contains(kinds, e.Kind) {
		t.Errorf("%s: got kind %v (%v), want %v", what, e.Kind, err, kinds)
	}
	if e.Retryable {
		t.Errorf("%s: the error is marked retryable: %v", what, err)
	}
}

func (s *suite) testLoadKey(t *testing.T, chain, merkle *fixture) {
	ctx := context.Background()
	first, err := s.backend.LoadKey(ctx, chain.key)
	if err != nil {
		t.Fatalf("LoadKey of a loaded key: %v", err)
	}
	again, err := s.backend.LoadKey(ctx, chain.key)
	if err != nil || again != first {
		t.Errorf("LoadKey is not idempotent: %+v then %+v, %v", first, again, err)
	}
	if first.HostBytes == 0 && first.DeviceBytes == 0 {
		t.Errorf("LoadKey says the key keeps no memory resident: %+v", first)
	}

	other := chain.key
	other.Digest = merkle.key.Digest
	_, err = s.backend.LoadKey(ctx, other)
	wantKind(t, "LoadKey of a loaded ID with another digest", err, sdk.ErrInvalidArgument)

	missing := sdk.KeyRef{ID: "sdktest-missing", Path: filepath.Join(s.cfg.KeyDir, "missing.pk"), Digest: chain.key.Digest}
	_, err = s.backend.LoadKey(ctx, missing)
	wantKind(t, "LoadKey of a missing file", err, sdk.ErrInvalidArgument)

	wrong := chain.key
	wrong.ID = "sdktest-wrong-digest"
	wrong.Digest[0] ^= 0xff
	_, err = s.backend.LoadKey(ctx, wrong)
	wantKind(t, "LoadKey with a digest the file does not have", err, sdk.ErrDigestMismatch, sdk.ErrInvalidArgument)

	if err := s.backend.UnloadKey(ctx, "sdktest-never-loaded"); err != nil {
		t.Errorf("UnloadKey of an unknown key: %v", err)
	}

	// Unload, see Prove refuse the key, load again.
	h, pub := s.partition(t, chain, 0)
	if err := s.backend.UnloadKey(ctx, chain.key.ID); err != nil {
		t.Fatalf("UnloadKey: %v", err)
	}
	_, err = s.backend.Prove(ctx, sdk.ProveRequest{KeyID: chain.key.ID, Partition: h})
	wantKind(t, "Prove with an unloaded key", err, sdk.ErrKeyNotLoaded)
	if _, err := s.backend.LoadKey(ctx, chain.key); err != nil {
		t.Fatalf("LoadKey after UnloadKey: %v", err)
	}
	if _, err := s.prove(ctx, chain, h, pub); err != nil {
		t.Error(err)
	}
}

func (s *suite) testProve(t *testing.T, chain, merkle *fixture) {
	type job struct {
		f   *fixture
		h   sdk.PartitionHandle
		pub witness.Witness
	}
	var jobs []job
	for _, f := range []*fixture{chain, merkle} {
		for i := range 2 {
			h, pub := s.partition(t, f, i)
			jobs = append(jobs, job{f, h, pub})
		}
	}
	// Up to MaxInFlight at once, as the host sends them.
	window := make(chan struct{}, min(max(s.desc.MaxInFlight, 1), 4))
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		window <- struct{}{}
		wg.Go(func() {
			defer func() { <-window }()
			res, err := s.prove(context.Background(), j.f, j.h, j.pub)
			if err == nil {
				t.Logf("%s: wall %v, device busy %v, %d phases", filepath.Base(j.h.Path), res.Wall, res.DeviceBusy, len(res.Phases))
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func (s *suite) testBadRequests(t *testing.T, chain, merkle *fixture) {
	ctx := context.Background()
	good, pub := s.partition(t, chain, 3)
	other, _ := s.partition(t, merkle, 0)
	unsealed := unsealedCopy(t, good)
	unsupported := []sdk.ErrorKind{sdk.ErrInvalidArgument, sdk.ErrUnimplemented}

	tests := []struct {
		name  string
		key   string
		h     func(h sdk.PartitionHandle) sdk.PartitionHandle
		kinds []sdk.ErrorKind
	}{
		{"unsealed file", chain.key.ID, func(sdk.PartitionHandle) sdk.PartitionHandle { return unsealed }, []sdk.ErrorKind{sdk.ErrUnsealed}},
		{"inode", chain.key.ID, func(h sdk.PartitionHandle) sdk.PartitionHandle { h.Inode++; return h }, []sdk.ErrorKind{sdk.ErrInvalidArgument}},
		{"size", chain.key.ID, func(h sdk.PartitionHandle) sdk.PartitionHandle { h.Size += sdk.PartitionAlign; return h }, []sdk.ErrorKind{sdk.ErrInvalidArgument}},
		{"offset", chain.key.ID, func(h sdk.PartitionHandle) sdk.PartitionHandle { h.BOffset += sdk.PartitionAlign; return h }, []sdk.ErrorKind{sdk.ErrInvalidArgument}},
		{"missing file", chain.key.ID, func(h sdk.PartitionHandle) sdk.PartitionHandle {
			h.Path = filepath.Join(filepath.Dir(h.Path), "999999")
			return h
		}, []sdk.ErrorKind{sdk.ErrInvalidArgument}},
		{"relative path", chain.key.ID, func(h sdk.PartitionHandle) sdk.PartitionHandle { h.Path = filepath.Base(h.Path); return h }, []sdk.ErrorKind{sdk.ErrInvalidArgument}},
		{"curve of another key", chain.key.ID, func(h sdk.PartitionHandle) sdk.PartitionHandle { h.Curve = sdk.CurveBN254; return h }, unsupported},
		{"unknown curve", chain.key.ID, func(h sdk.PartitionHandle) sdk.PartitionHandle { h.Curve = "secp256k1"; return h }, unsupported},
		{"unknown key", "sdktest-no-such-key", func(h sdk.PartitionHandle) sdk.PartitionHandle { return h }, []sdk.ErrorKind{sdk.ErrKeyNotLoaded}},
		{"partition of another circuit", chain.key.ID, func(sdk.PartitionHandle) sdk.PartitionHandle { return other }, []sdk.ErrorKind{sdk.ErrInvalidArgument}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.backend.Prove(ctx, sdk.ProveRequest{KeyID: tc.key, Partition: tc.h(good)})
			wantKind(t, "Prove", err, tc.kinds...)
		})
	}
	if s.proc.Exited() {
		t.Fatal("the backend exited after the bad requests")
	}
	if _, err := s.prove(ctx, chain, good, pub); err != nil {
		t.Errorf("after the bad requests: %v", err)
	}
}

// unsealedCopy returns a handle to a copy of h's partition in a memfd that is
// not sealed (its bytes could change under a backend), the same layout and
// contents otherwise; the copy is closed when the test ends.
// Deliberately parallel to package sdk's testMemfd: see why there.
func unsealedCopy(t *testing.T, h sdk.PartitionHandle) sdk.PartitionHandle {
	t.Helper()
	data, err := os.ReadFile(h.Path)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.MemfdCreate("sdktest-unsealed", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "sdktest-unsealed")
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	h.Path, h.Inode = fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd), st.Ino
	return h
}

// cancelAttempts is how many times testCancel tries a cancel before it fails: a
// backend that stops passes the first try on a quiet machine; on a loaded one, a
// stall of the machine can make one try look like work going on, but a backend that
// does go on fails every try, since the work left after a cancel always delays the
// next proof.
const cancelAttempts = 3

// testCancel cancels a Prove midway and checks that the backend stops its work:
// the Prove returns ErrCanceled, a small Prove right after is not held up by the
// cancelled one's remaining work, and the process goes idle.
func (s *suite) testCancel(t *testing.T, small *fixture) {
	ctx := context.Background()
	smallH, smallPub := s.partition(t, small, 5)
	t0 := time.Now()
	if _, err := s.prove(ctx, small, smallH, smallPub); err != nil {
		t.Fatal(err)
	}
	smallTime := time.Since(t0)
	big, bigH, bigTime := s.cancelFixture(t, smallTime)

	var tries []string
	for attempt := 1; attempt <= cancelAttempts; attempt++ {
		ok, report := s.tryCancel(t, big, bigH, bigTime, small, smallH, smallPub)
		tries = append(tries, report)
		t.Logf("try %d: %s", attempt, report)
		if ok {
			break
		}
		if attempt == cancelAttempts {
			t.Errorf("in each of %d tries the Prove after the cancel was held up by the cancelled proof's remaining work:\n%s",
				cancelAttempts, strings.Join(tries, "\n"))
		}
	}
	if busy, ok := cpuBusy(s.proc.Pid(), 500*time.Millisecond); ok && busy > 0.5 {
		t.Errorf("the backend uses %.2f cores while idle after a cancel", busy)
	}
}

// cancelFixture returns the chain fixture whose Prove testCancel cancels, with a
// partition and its uncancelled proving time (the proof is checked while at it). Its
// size is Config.CancelChainK, or else chosen from the measured time of the small
// proof so that the proof takes about Config.CancelTarget; a guess that proves much
// faster than that is corrected once from its own time.
func (s *suite) cancelFixture(t *testing.T, smallTime time.Duration) (*fixture, sdk.PartitionHandle, time.Duration) {
	k, chosen := s.cfg.CancelChainK, false
	if k == 0 {
		k, chosen = s.cancelK(s.cfg.ChainK, smallTime), true
	}
	for {
		f := s.fixture(t, "chain", map[string]int{"k": k})
		h, pub := s.partition(t, f, 0)
		t0 := time.Now()
		if _, err := s.prove(context.Background(), f, h, pub); err != nil {
			t.Fatal(err)
		}
		d := time.Since(t0)
		if next := s.cancelK(k, d); chosen && d < s.cfg.CancelTarget/2 && next > k {
			t.Logf("chain-k%d proves in %v, under half of %v: trying chain-k%d", k, d, s.cfg.CancelTarget, next)
			k, chosen = next, false
			continue
		}
		t.Logf("the cancelled proof: chain-k%d, %v uncancelled", k, d)
		return f, h, d
	}
}

// cancelK is the chain size expected to prove in about Config.CancelTarget, given
// that chain-k proves in d (proving time grows about linearly with the constraints):
// larger than Config.ChainK, at most Config.MaxCancelChainK.
func (s *suite) cancelK(k int, d time.Duration) int {
	for d < s.cfg.CancelTarget && k < s.cfg.MaxCancelChainK {
		k++
		d *= 2
	}
	return max(k, min(s.cfg.MaxCancelChainK, s.cfg.ChainK+1))
}

// tryCancel cancels one Prove of big at an eighth of its time and reports whether
// the small proof that follows was done before the cancelled one's remaining work
// would have let it, with a line saying what it measured.
func (s *suite) tryCancel(t *testing.T, big *fixture, bigH sdk.PartitionHandle, bigTime time.Duration, small *fixture, smallH sdk.PartitionHandle, smallPub witness.Witness) (bool, string) {
	ctx := context.Background()
	cancelAt := bigTime / 8
	remaining := bigTime - cancelAt
	// Work that goes on after the cancel delays the next proof by about remaining; a
	// backend that stops delays it by its cancellation latency, which may be part of
	// an uninterruptible step (zkhost-backend-cpu kills the process computing the
	// proof, so it has none). Three quarters of remaining is the threshold.
	allowance := remaining * 3 / 4

	// The small proof's time is measured afresh before each try, so a machine that
	// got slower (or faster) since the fixture was measured does not bias the try.
	t0 := time.Now()
	if _, err := s.prove(ctx, small, smallH, smallPub); err != nil {
		t.Fatal(err)
	}
	smallTime := time.Since(t0)

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := s.backend.Prove(cctx, sdk.ProveRequest{KeyID: big.key.ID, Partition: bigH})
		done <- err
	}()
	time.Sleep(cancelAt)
	cancel()
	canceledAt := time.Now()
	select {
	case err := <-done:
		if sdk.KindOf(err) != sdk.ErrCanceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled Prove returned %v, want an error of kind %v", err, sdk.ErrCanceled)
		}
	case <-time.After(remaining + 10*time.Second):
		t.Fatal("the cancelled Prove did not return")
	}

	// The backend learns of the cancel a moment after the client does, so it may
	// still count the cancelled proof against MaxInFlight: retry that
	// (retryable) refusal as the host does, and time the whole from the cancel.
	retries := 0
	for {
		_, err := s.prove(ctx, small, smallH, smallPub)
		if err == nil {
			break
		}
		if sdk.KindOf(err) != sdk.ErrResourceExhausted || !sdk.IsRetryable(err) || time.Since(canceledAt) > smallTime+remaining+10*time.Second {
			t.Fatalf("Prove after a cancel: %v", err)
		}
		retries++
		time.Sleep(5 * time.Millisecond)
	}
	after := time.Since(canceledAt)
	ok := after <= smallTime+allowance
	return ok, fmt.Sprintf("chain-k%d proves in %v, chain-k%d in %v; cancelled at %v, the next proof was done %v after the cancel (at most %v passes; %d retries while the backend was busy)",
		big.spec.Params["k"], bigTime, small.spec.Params["k"], smallTime, cancelAt, after, smallTime+allowance, retries)
}

// cpuBusy returns how many cores process pid used on average over window, from
// /proc (false where there is none).
func cpuBusy(pid int, window time.Duration) (float64, bool) {
	before, ok := cpuTicks(pid)
	if !ok {
		return 0, false
	}
	t0 := time.Now()
	time.Sleep(window)
	after, ok := cpuTicks(pid)
	if !ok {
		return 0, false
	}
	const ticksPerSecond = 100 // USER_HZ, 100 on every Linux architecture Go supports
	return float64(after-before) / ticksPerSecond / time.Since(t0).Seconds(), true
}

// cpuTicks returns utime+stime of pid in clock ticks.
func cpuTicks(pid int) (uint64, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// Fields after the parenthesised command name; utime and stime are the 12th
	// and 13th of them.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return utime + stime, true
}
