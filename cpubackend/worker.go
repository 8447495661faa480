package cpubackend

import (
	"context"
	"os"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// WorkerArg is refprover.WorkerArg: the first argument that makes a binary linking
// this backend run one proof as a worker (ServeWorker) instead of serving.
const WorkerArg = refprover.WorkerArg

// ServeWorker is refprover.ServeWorker: a binary whose first argument is
// WorkerArg calls it instead of serving.
func ServeWorker() int { return refprover.ServeWorker() }

// proveInWorker proves partition h with the key in keyFile (whose header digest is
// keyDigest) in a worker process (refprover.Worker says why), killing it if ctx
// ends first.
func (b *Backend) proveInWorker(ctx context.Context, keyFile *os.File, keyDigest [32]byte, h sdk.PartitionHandle) ([]byte, refprover.Timings, error) {
	w := refprover.Worker{
		Path: b.workerPath, Threads: b.threads, Log: b.log,
		Started: b.workerStarted,
		Ended:   b.workerEnded, // its CPU time counts in Utilization
	}
	return w.Prove(ctx, keyFile, keyDigest, h)
}
