package cpubackend

import (
	"context"
	"os"
	"sync"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// WorkerArg is refprover.WorkerArg: the first argument that makes a binary linking
// this backend run as a prove worker (ServeWorker) instead of serving.
const WorkerArg = refprover.WorkerArg

// ServeWorker is refprover.ServeWorker: a binary whose first argument is
// WorkerArg calls it instead of serving.
func ServeWorker() int { return refprover.ServeWorker() }

// warmWorker is the prove worker of one loaded key (refprover.Worker says why
// proofs run in a child process). It is started with the key, proves the key's
// partitions one after another, and is killed by a cancel; the next worker is
// then started at once, in the background, so the key's next proof finds one
// ready.
type warmWorker struct {
	start func(ctx context.Context) (*refprover.WorkerProcess, error)

	mu     sync.Mutex // held across a proof: the key's proofs take turns
	proc   *refprover.WorkerProcess
	closed bool
}

// newWarmWorker starts the key's worker and waits until it is ready.
func newWarmWorker(ctx context.Context, start func(ctx context.Context) (*refprover.WorkerProcess, error)) (*warmWorker, error) {
	proc, err := start(ctx)
	if err != nil {
		return nil, err
	}
	return &warmWorker{start: start, proc: proc}, nil
}

// prove proves partition h in the key's worker, starting one first when the last
// is gone (killed by a cancel whose replacement is not ready yet, or died).
func (w *warmWorker) prove(ctx context.Context, h sdk.PartitionHandle) ([]byte, refprover.Timings, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, refprover.Timings{}, sdk.Errorf(sdk.ErrInternal, "prove worker: the key was unloaded")
	}
	if w.proc == nil || !w.proc.Alive() {
		proc, err := w.start(ctx)
		if err != nil {
			return nil, refprover.Timings{}, err
		}
		w.proc = proc
	}
	proof, timings, err := w.proc.Prove(ctx, h)
	if err != nil && ctx.Err() == nil && !w.proc.Alive() {
		// The worker is gone and no cancel killed it: it may have died
		// between proofs after the check above (its exit not yet seen), so
		// the proof is tried once more on a fresh one. A partition that
		// kills its worker fails this second try as well, and that error
		// is returned.
		proc, serr := w.start(ctx)
		if serr != nil {
			w.proc = nil
			return nil, refprover.Timings{}, serr
		}
		w.proc = proc
		proof, timings, err = w.proc.Prove(ctx, h)
	}
	if !w.proc.Alive() {
		w.proc = nil
		if ctx.Err() != nil {
			// Killed by the cancel: ready the next one without making the
			// caller wait for it.
			go w.replace()
		}
	}
	return proof, timings, err
}

// release asks the worker to give its last proof's heap back to the system, so
// that another key's proof does not run beside memory the host no longer counts.
// A worker that cannot answer is gone; the key's next proof starts another.
func (w *warmWorker) release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.proc == nil || !w.proc.Alive() {
		return nil
	}
	err := w.proc.Release(context.Background())
	if !w.proc.Alive() {
		w.proc = nil
	}
	return err
}

// replace starts the key's next worker if it has none.
func (w *warmWorker) replace() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.proc != nil {
		return
	}
	if proc, err := w.start(context.Background()); err == nil {
		w.proc = proc
	} // else the next proof tries again and reports the error
}

// close kills the worker (no proof runs on an unloaded key: the key registry
// closes a key after its last proof) and keeps a replacement from starting.
func (w *warmWorker) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.proc != nil {
		w.proc.Close()
		w.proc = nil
	}
}

// startedWorker is startWorker's outcome, handed from the goroutine that ran it.
type startedWorker struct {
	w   *warmWorker
	err error
}

// startWorker returns the warm worker of the key in keyFile (header digest
// keyDigest, which the worker checks), started and ready.
func (b *Backend) startWorker(ctx context.Context, keyFile *os.File, keyDigest [32]byte) (*warmWorker, error) {
	w := refprover.Worker{
		Path: b.workerPath, Threads: b.threads, Log: b.log,
		Started: b.workerStarted,
		Ended:   b.workerEnded, // its CPU time counts in Utilization
	}
	return newWarmWorker(ctx, func(ctx context.Context) (*refprover.WorkerProcess, error) {
		return w.Start(ctx, keyFile, keyDigest)
	})
}
