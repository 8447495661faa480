package cpubackend

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkhost/zkhost/sdk"
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

func TestWorkerProveVerifies(t *testing.T) {
	f, b := loadedChain(t, Options{Threads: 2, WorkerPath: testExecutable(t)})
	for range 2 {
		res, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
		if err != nil {
			t.Fatal(err)
		}
		verifyResult(t, f, res)
		if len(res.Phases) != 5 {
			t.Errorf("phases %+v, want map, ntt, msm_g1, msm_g2 and finish", res.Phases)
		}
	}
	if kids := workerChildren(t); len(kids) != 0 {
		t.Errorf("worker processes left after the proofs: %v", kids)
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
	// Cancel once the worker runs (the proof takes far longer than starting it).
	deadline := time.Now().Add(30 * time.Second)
	for len(workerChildren(t)) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the Prove returned (%v) before a worker was seen", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no worker process appeared")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	err := <-done
	if sdk.KindOf(err) != sdk.ErrCanceled {
		t.Fatalf("err = %v, want an ErrCanceled", err)
	}
	if kids := workerChildren(t); len(kids) != 0 {
		t.Errorf("worker processes left after the cancel: %v", kids)
	}
	// The backend proves again afterwards.
	res, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
	if err != nil {
		t.Fatal(err)
	}
	verifyResult(t, f, res)
}

func TestWorkerFailures(t *testing.T) {
	tests := []struct {
		name, worker, want string
	}{
		{"exits", "/bin/false", "prove worker: exit status 1"},
		{"missing", filepath.Join(t.TempDir(), "no-such-worker"), "prove worker: starting"},
		{"answers nothing", "/bin/true", "prove worker: decoding its answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, b := loadedChain(t, Options{WorkerPath: tt.worker})
			_, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)})
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
			cpu0 := cpuTime()
			for range b.N {
				if _, err := be.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: h}); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time (this process and its reaped workers) is what the worker adds,
			// and unlike wall time it holds still on a loaded machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time of this process and of its children that were waited for.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	sum := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return sum(self) + sum(kids)
}
