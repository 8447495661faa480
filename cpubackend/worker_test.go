package cpubackend

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/procfs"
)

// testExecutable is this test binary, which serves as a prove worker (TestMain).
func testExecutable(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// TestWorkerProveVerifies proves twice with a loaded key: both proofs verify, the
// key's one worker (started by LoadKey) computes both, and it is gone once the key
// is unloaded.
func TestWorkerProveVerifies(t *testing.T) {
	f, b := loadedChain(t, Options{Threads: 2, WorkerPath: testExecutable(t)})
	started := workerChildren(t)
	if len(started) != 1 {
		t.Fatalf("workers after LoadKey: %v, want one", started)
	}
	for range 2 {
		res, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
		if err != nil {
			t.Fatal(err)
		}
		verifyResult(t, f, res)
		if len(res.Phases) != 5 {
			t.Errorf("phases %+v, want map, ntt, msm_g1, msm_g2 and finish", res.Phases)
		}
		if kids := workerChildren(t); !slices.Equal(kids, started) {
			t.Errorf("workers after a proof: %v, want the one LoadKey started, %v", kids, started)
		}
	}
	if err := b.UnloadKey(context.Background(), "chain"); err != nil {
		t.Fatal(err)
	}
	if kids := workerChildren(t); len(kids) != 0 {
		t.Errorf("worker processes left after the key was unloaded: %v", kids)
	}
}

// TestWorkerCancelKills cancels a proof while its worker computes: the Prove
// returns ErrCanceled and the worker is gone when it does.
func TestWorkerCancelKills(t *testing.T) {
	f, b := loadedChain(t, Options{Threads: 1, WorkerPath: testExecutable(t)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.Prove(ctx, sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
		done <- err
	}()
	// Cancel once the worker computes (the proof takes far longer than the
	// request's way there).
	kids := workerChildren(t)
	if len(kids) != 1 {
		t.Fatalf("workers after LoadKey: %v, want one", kids)
	}
	killed := kids[0]
	deadline := time.Now().Add(30 * time.Second)
	for liveCPU(killed) < 20*time.Millisecond {
		select {
		case err := <-done:
			t.Fatalf("the Prove returned (%v) before its worker was seen computing", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker did not start computing")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	err := <-done
	if sdk.KindOf(err) != sdk.ErrCanceled {
		t.Fatalf("err = %v, want an ErrCanceled", err)
	}
	if kids := workerChildren(t); slices.Contains(kids, killed) {
		t.Errorf("the cancelled proof's worker %d is still running (workers: %v)", killed, kids)
	}
	// A new worker takes its place without waiting for a proof, and proves.
	replacement := waitForWorker(t, killed)
	res, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
	if err != nil {
		t.Fatal(err)
	}
	verifyResult(t, f, res)
	if kids := workerChildren(t); !slices.Equal(kids, []int{replacement}) {
		t.Errorf("workers after the next proof: %v, want the replacement %d", kids, replacement)
	}
}

// TestWorkerDiedBetweenProofs kills the key's worker while it waits for work: the
// next Prove starts another and proves.
func TestWorkerDiedBetweenProofs(t *testing.T) {
	f, b := loadedChain(t, Options{Threads: 1, WorkerPath: testExecutable(t)})
	kids := workerChildren(t)
	if len(kids) != 1 {
		t.Fatalf("workers after LoadKey: %v, want one", kids)
	}
	if err := syscall.Kill(kids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for slices.Contains(workerChildren(t), kids[0]) { // until it is reaped
		time.Sleep(time.Millisecond)
	}
	res, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
	if err != nil {
		t.Fatal(err)
	}
	verifyResult(t, f, res)
}

// waitForWorker waits until one worker other than old runs and returns it.
func waitForWorker(t *testing.T, old int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		kids := workerChildren(t)
		if len(kids) == 1 && kids[0] != old {
			return kids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers %v 30 s after the cancel, want one replacing %d", kids, old)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWorkerFailures(t *testing.T) {
	tests := []struct {
		name, worker, want string
	}{
		{"exits", "/bin/false", "exit status 1"},
		{"missing", filepath.Join(t.TempDir(), "no-such-worker"), "prove worker: starting"},
		{"answers nothing", "/bin/true", "exit status 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := chainFixture(t)
			b := New(Options{WorkerPath: tt.worker})
			defer b.Close()
			_, err := b.LoadKey(context.Background(), f.keyRef("chain"))
			if sdk.KindOf(err) != sdk.ErrInternal || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want an internal error containing %q", err, tt.want)
			}
		})
	}
}

func TestLoadKeyRefusesReplacedFile(t *testing.T) {
	f := chainFixture(t)
	b := New(Options{WorkerPath: testExecutable(t)})
	t.Cleanup(func() { b.Close() })
	ref := f.keyRef("chain")
	fd, err := os.Open(ref.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	// A file at another path stands for the key file replaced after it was opened.
	other := filepath.Join(t.TempDir(), "other.pk")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sameFile(fd, sdk.KeyRef{ID: "chain", Path: other}); sdk.KindOf(err) != sdk.ErrDigestMismatch {
		t.Errorf("sameFile with a replaced file: %v, want a digest mismatch", err)
	}
	if err := sameFile(fd, ref); err != nil {
		t.Errorf("sameFile with the same file: %v", err)
	}
}

// workerChildren lists the pids of this process's children running as prove
// workers.
func workerChildren(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var kids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// Fields after the command (in parentheses, which may hold spaces): state, ppid.
		rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(rest) < 2 || rest[1] != self || rest[0] == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), WorkerArg) {
			kids = append(kids, pid)
		}
	}
	return kids
}

// BenchmarkProveWorker proves the fixture's small chain circuit (about 2^10
// constraints, where a process start weighs most) in process and in a worker, in
// the same run: the difference is the worker's cost per proof.
func BenchmarkProveWorker(b *testing.B) {
	for _, mode := range []struct {
		name   string
		worker bool
	}{{"in-process", false}, {"worker", true}} {
		b.Run(mode.name, func(b *testing.B) {
			opts := Options{}
			if mode.worker {
				opts.WorkerPath = testExecutable(b)
			}
			f := chainFixture(b)
			be := New(opts)
			defer be.Close()
			if _, err := be.LoadKey(context.Background(), f.keyRef("chain")); err != nil {
				b.Fatal(err)
			}
			h := f.partition(b)
			b.ResetTimer()
			cpu0, _ := procfs.CPUTimeWithChildren()
			for range b.N {
				if _, err := be.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: h}); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time (this process and its reaped workers) is what the worker adds,
			// and unlike wall time it holds still on a loaded machine.
			cpu1, _ := procfs.CPUTimeWithChildren()
			b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// TestWorkersTakeTurns proves with two keys in turn, each with its own worker:
// before one key's worker computes, the other's gives its heap back (a release
// it answers), and every proof verifies.
func TestWorkersTakeTurns(t *testing.T) {
	f := chainFixture(t)
	b := New(Options{Threads: 1, WorkerPath: testExecutable(t)})
	t.Cleanup(func() { b.Close() })
	for _, id := range []string{"a", "b"} {
		if _, err := b.LoadKey(context.Background(), f.keyRef(id)); err != nil {
			t.Fatal(err)
		}
	}
	if kids := workerChildren(t); len(kids) != 2 {
		t.Fatalf("workers after loading two keys: %v, want two", kids)
	}
	for _, id := range []string{"a", "b", "a"} {
		res, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: id, Partition: f.partition(t)})
		if err != nil {
			t.Fatal(err)
		}
		verifyResult(t, f, res)
	}
	// The worker of b proved last; a release leaves it proving.
	lease, err := b.keys.Acquire("b")
	if err != nil {
		t.Fatal(err)
	}
	w := lease.Key().worker
	lease.Release()
	if err := w.release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if w.proc == nil || !w.proc.Alive() {
		t.Fatal("the worker is gone after a release")
	}
	res, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: "b", Partition: f.partition(t)})
	if err != nil {
		t.Fatal(err)
	}
	verifyResult(t, f, res)
}
