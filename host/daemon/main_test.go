package daemon

// End-to-end fixture: the daemon in-process (New + Run) served through api.Listen on a
// temporary unix socket and called through host/client, with real backend processes.
// TestMain builds the binaries and the keys once for the whole package.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/client"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/sdktest"
	"github.com/zkhost/zkhost/sdk/shm"
)

// The circuits of the tests, by key name (what [[circuit]] name says).
const (
	// small proves in tens of milliseconds: ordering, bad inputs, events.
	small = "chain-k8"
	// big proves in a second or more on this machine's CPU backend: long enough to
	// cancel a proof in flight or kill the host in the middle of a job.
	big = "chain-k13"
	// merkle has other public inputs than chain: a witness of the wrong shape.
	merkle = "merkle-d4-k2"
	// smallBN254 is small on BN254.
	smallBN254 = "chain-k8-bn254"
)

var (
	binDir     string // zkhost and zkhost-backend-cpu, built by TestMain
	backendBin string
	zkhostBin  string
	keysDir    string // key sets of small, big and merkle
	specs      = map[string]circuits.Spec{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zkd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if err := setup(dir); err != nil {
		fmt.Fprintln(os.Stderr, "daemon tests: setup:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// setup builds the binaries (without the race detector: they are separate
// processes) and generates the keys. The small circuit's keys come from
// circuit.Keygen in this process; the bigger ones from `zkhost keygen` (the same
// function), because under -race gnark's setup of chain-k13 takes half a minute.
func setup(dir string) error {
	binDir = filepath.Join(dir, "bin")
	backendBin = filepath.Join(binDir, config.DefaultBackendName)
	zkhostBin = filepath.Join(binDir, "zkhost")
	build := exec.Command("go", "build", "-o", binDir+"/", "github.com/zkhost/zkhost/cmd/zkhost", "github.com/zkhost/zkhost/cmd/zkhost-backend-cpu")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	keysDir = filepath.Join(dir, "keys")
	for _, c := range []struct {
		name   string
		params map[string]int
	}{
		{"chain", map[string]int{"k": 8}},
		{"chain", map[string]int{"k": 13}},
		{"merkle", map[string]int{"d": 4, "k": 2}},
	} {
		s, err := circuits.Lookup(c.name, c.params)
		if err != nil {
			return err
		}
		specs[s.ID()] = s
	}
	bn, err := specs[small].On(ecc.BN254)
	if err != nil {
		return err
	}
	specs[bn.ID()] = bn
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() {
		errs[0] = errors.Join(circuit.Keygen(specs[small], keysDir), circuit.Keygen(specs[smallBN254], keysDir))
	})
	wg.Go(func() {
		for i, args := range [][]string{{"--circuit", "chain", "--k", "13"}, {"--circuit", "merkle", "--d", "4", "--k", "2"}} {
			cmd := exec.Command(zkhostBin, append([]string{"keygen", "--out", keysDir}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[1+i] = fmt.Errorf("zkhost keygen %v: %v\n%s", args, err, out)
			}
		}
	})
	wg.Wait()
	return errors.Join(errs...)
}

// opts shape a test daemon's config.
type opts struct {
	circuits []string // key names to serve (default: small)
	extra    string   // more TOML, appended (top-level keys must not be repeated)
	budget   string   // [budget] body
	retry    string   // [retry] body (default: fast retries)
	stateDir string   // reuse a state directory (a restart); default a new one
	// noCircuits leaves out every [[circuit]]: the daemon serves what it finds in
	// <state_dir>/keys.
	noCircuits bool
	// compactW starts the CPU backend with -compact-w: it takes compact
	// partitions, so the daemon sends them.
	compactW bool
	// deviceOptions are more [device.options] lines for the first device.
	deviceOptions string
}

// fixture is a running daemon and a client connected to it.
type fixture struct {
	t        *testing.T
	stateDir string
	cfg      *config.Config
	d        *Daemon
	srv      *api.Server
	c        *client.Client
	log      *sdktest.SyncBuffer
	stop     context.CancelFunc
	runDone  chan error
	stopped  bool
}

// configText is a test daemon's config: one synthesis worker, one CPU backend that
// holds one partition at a time (so dispatch order is observable), fast retries.
func configText(stateDir string, o opts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state_dir = %q\nlog_level = \"debug\"\n", stateDir)
	b.WriteString(o.extra)
	fmt.Fprintf(&b, "\n[api]\nsocket = %q\n", filepath.Join(stateDir, "zk.sock"))
	b.WriteString("\n[synthesis]\nworkers = 1\nthreads = 1\n")
	if o.budget != "" {
		b.WriteString("\n[budget]\n" + o.budget + "\n")
	}
	retry := o.retry
	if retry == "" {
		retry = "backoff_base = \"50ms\"\nbackoff_max = \"200ms\""
	}
	b.WriteString("\n[retry]\n" + retry + "\n")
	fmt.Fprintf(&b, "\n[[device]]\nbackend = %q\nin_flight = 1\n[device.options]\nthreads = \"2\"\n", backendBin)
	if o.compactW {
		b.WriteString("compact-w = \"true\"\n")
	}
	b.WriteString(o.deviceOptions)
	names := o.circuits
	if len(names) == 0 {
		names = []string{small}
	}
	if o.noCircuits {
		names = nil
	}
	for _, n := range names {
		fmt.Fprintf(&b, "\n[[circuit]]\nname = %q\nkeys = %q\n", n, keysDir)
	}
	return b.String()
}

// start runs a daemon for the test; it is stopped at cleanup.
func start(t *testing.T, o opts) *fixture {
	t.Helper()
	stateDir := o.stateDir
	if stateDir == "" {
		stateDir = apitest.ShortTempDir(t)
	}
	cfg, err := config.Parse([]byte(configText(stateDir, o)), filepath.Join(stateDir, "zkhost.toml"))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	f := &fixture{t: t, stateDir: stateDir, cfg: cfg, log: &sdktest.SyncBuffer{}, runDone: make(chan error, 1)}
	logger := hclog.New(&hclog.LoggerOptions{Name: "zkhost", Output: f.log, Level: hclog.Debug})
	f.d, err = New(context.Background(), cfg, logger)
	if err != nil {
		t.Fatalf("daemon.New: %v", err)
	}
	f.srv, err = api.Listen(api.Config{Socket: cfg.API.Socket}, f.d, logger.Named("api"))
	if err != nil {
		f.d.Close()
		t.Fatalf("api.Listen: %v", err)
	}
	go f.srv.Serve()
	ctx, cancel := context.WithCancel(context.Background())
	f.stop = cancel
	go func() { f.runDone <- f.d.Run(ctx) }()
	f.c, err = client.Dial(cfg.API.Socket, client.Options{})
	if err != nil {
		f.shutdown()
		t.Fatalf("client.Dial: %v", err)
	}
	t.Cleanup(func() {
		f.shutdown()
		if t.Failed() {
			t.Logf("daemon log:\n%s", f.log.String())
		}
	})
	return f
}

// shutdown stops the API, then the daemon (which stops its backends).
func (f *fixture) shutdown() {
	if f.stopped {
		return
	}
	f.stopped = true
	if f.c != nil {
		f.c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	f.srv.Stop(ctx)
	cancel()
	f.stop()
	select {
	case <-f.runDone:
	case <-time.After(30 * time.Second):
		f.t.Errorf("daemon did not stop within 30s")
	}
}

// ctx returns a context bounded for one test step.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// witnesses returns n valid witnesses of circuit name (gnark full-witness bytes),
// different for every seed and partition.
func witnesses(t *testing.T, name string, n int, seed uint64) [][]byte {
	t.Helper()
	out := make([][]byte, n)
	for i := range out {
		w, err := specs[name].Witness(i, seed)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = w.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

var (
	vkMu    sync.Mutex
	vkCache = map[string]groth16.VerifyingKey{}
)

// verifyingKey reads circuit name's verifying key from the key directory.
func verifyingKey(t *testing.T, name string) groth16.VerifyingKey {
	t.Helper()
	vkMu.Lock()
	defer vkMu.Unlock()
	if vk, ok := vkCache[name]; ok {
		return vk
	}
	_, vkPath, _, _ := circuit.Paths(keysDir, name)
	data, err := os.ReadFile(vkPath)
	if err != nil {
		t.Fatal(err)
	}
	vk := groth16.NewVerifyingKey(curveOf(name))
	if _, err := vk.ReadFrom(bytes.NewReader(data)); err != nil {
		t.Fatalf("reading %s: %v", vkPath, err)
	}
	vkCache[name] = vk
	return vk
}

// curveOf is the curve of the test circuit name.
func curveOf(name string) ecc.ID {
	if s, ok := specs[name]; ok {
		return s.Curve
	}
	return ecc.BLS12_381
}

// verifyProofs checks a done job as a client would: every partition carries a proof
// that gnark's groth16.Verify accepts against the circuit's verifying key, for the
// public inputs of the witness submitted at that index.
func verifyProofs(t *testing.T, name string, job api.Job, submitted [][]byte) {
	t.Helper()
	if job.State != api.JobDone {
		t.Fatalf("job %s is %s (%s), want done", job.ID, job.State, job.Error)
	}
	if len(job.Partitions) != len(submitted) {
		t.Fatalf("job %s has %d partitions, submitted %d", job.ID, len(job.Partitions), len(submitted))
	}
	vk := verifyingKey(t, name)
	for i, p := range job.Partitions {
		if p.State != api.PartitionVerified {
			t.Errorf("job %s partition %d is %s, want verified", job.ID, i, p.State)
		}
		if len(p.Proof) == 0 || len(p.PublicWitness) == 0 {
			t.Fatalf("job %s partition %d: no proof (%d bytes) or public witness (%d bytes)", job.ID, i, len(p.Proof), len(p.PublicWitness))
		}
		full, err := witness.New(curveOf(name).ScalarField())
		if err != nil {
			t.Fatal(err)
		}
		if err := full.UnmarshalBinary(submitted[i]); err != nil {
			t.Fatal(err)
		}
		wantPub, err := full.Public()
		if err != nil {
			t.Fatal(err)
		}
		wantBytes, err := wantPub.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(wantBytes, p.PublicWitness) {
			t.Errorf("job %s partition %d: public witness is not the one submitted at index %d", job.ID, i, i)
		}
		proof := groth16.NewProof(curveOf(name))
		if _, err := proof.ReadFrom(bytes.NewReader(p.Proof)); err != nil {
			t.Errorf("job %s partition %d: reading proof: %v", job.ID, i, err)
			continue
		}
		if err := groth16.Verify(proof, vk, wantPub); err != nil {
			t.Errorf("job %s partition %d: proof does not verify: %v", job.ID, i, err)
		}
	}
}

// await follows a job to its end and returns it with its proofs.
func (f *fixture) await(ctx context.Context, id string) api.Job {
	f.t.Helper()
	job, err := f.c.Await(ctx, id, nil)
	if err != nil {
		f.t.Fatalf("await %s: %v", id, err)
	}
	return job
}

// awaitWithin is await with a deadline of its own, d from now; what names
// the wait in the failure.
func (f *fixture) awaitWithin(ctx context.Context, id string, d time.Duration, what string) api.Job {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	job, err := f.c.Await(ctx, id, nil)
	if err != nil {
		f.t.Fatalf("%s: %v", what, err)
	}
	return job
}

// submit submits a job and fails the test on error.
func (f *fixture) submit(ctx context.Context, name string, class api.Class, ws [][]byte) api.Job {
	f.t.Helper()
	job, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: name, Witnesses: ws, Class: class})
	if err != nil {
		f.t.Fatalf("submit %s (%s, %d partitions): %v", name, class, len(ws), err)
	}
	return job
}

// partitionFiles lists the partitions (sealed memfds) process pid holds: this
// test process for an in-process daemon.
func partitionFiles(t *testing.T, pid int) []string {
	t.Helper()
	names, err := shm.Held(pid)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// keyBytes is what the daemon reserves for the proving keys of names: their files'
// sizes (the budget's baseline with no job running).
func keyBytes(t *testing.T, names ...string) uint64 {
	t.Helper()
	var n uint64
	for _, name := range names {
		_, _, pk, _ := circuit.Paths(keysDir, name)
		st, err := os.Stat(pk)
		if err != nil {
			t.Fatal(err)
		}
		n += uint64(st.Size())
	}
	return n
}

// reached reports whether event e shows partition idx in state s (proving or
// verified): the event that moves it there, or the snapshot Await starts with, for a
// partition that got there before the follower subscribed.
func reached(e api.JobEvent, idx int, s api.PartitionState) bool {
	kind := map[api.PartitionState]api.EventKind{
		api.PartitionProving:  api.EventPartitionProving,
		api.PartitionVerified: api.EventPartitionVerified,
	}[s]
	if e.Kind == kind && e.Partition == idx {
		return true
	}
	return e.Kind == api.EventSnapshot && e.Job != nil && idx < len(e.Job.Partitions) && e.Job.Partitions[idx].State == s
}

// checkTimes checks the phase times a done job's partitions carry (what `zkhost job`
// and `zkhost submit --wait` show): each set, in pipeline order.
func checkTimes(t *testing.T, job api.Job) {
	t.Helper()
	for _, p := range job.Partitions {
		steps := []struct {
			name string
			at   time.Time
		}{
			{"queued", p.QueuedAt}, {"synthesis start", p.SynthStart}, {"synthesis end", p.SynthEnd},
			{"prove start", p.ProveStart}, {"prove end", p.ProveEnd}, {"verified", p.VerifiedAt},
		}
		for i, s := range steps {
			if s.at.IsZero() {
				t.Errorf("job %s partition %d: no %s time", job.ID, p.Index, s.name)
				continue
			}
			if i > 0 && s.at.Before(steps[i-1].at) {
				t.Errorf("job %s partition %d: %s (%s) before %s (%s)", job.ID, p.Index, s.name,
					s.at.Format(time.StampMicro), steps[i-1].name, steps[i-1].at.Format(time.StampMicro))
			}
		}
	}
}
