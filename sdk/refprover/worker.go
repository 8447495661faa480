package refprover

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	hclog "github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/linetail"
)

// A proof computed in a worker process.
//
// gnark-crypto's multi-scalar multiplications cannot be interrupted, and cutting
// them into chunks to check a context between them costs work: measured here with
// one thread, a G1 MSM cut in quarters did 52% more work than whole at 2^13 points,
// 22% at 2^16 and 7% at 2^18 (each chunk pays its own bucket reduction and a
// smaller window). A proof's MSMs are most of its time, so a cancelled proof would
// run on for most of its length. A Worker runs each proof in a child process
// instead, which a cancel kills at once: cancellation reaches every
// phase at no cost to the MSMs, for a process start and the FFT domain's tables
// per proof (milliseconds). The child maps the same key file and partition file
// as the backend, through descriptors it inherits, so it reads the very files the
// backend checked, and it dies with the backend (PR_SET_PDEATHSIG).

// WorkerArg is the first argument that makes a backend binary run one proof as a
// worker (ServeWorker) instead of serving: a binary that is its own Worker.Path
// checks for it first thing in main.
const WorkerArg = "-zkhost-prove-worker"

// The descriptors a worker inherits (exec.Cmd.ExtraFiles start at 3).
const (
	workerKeyFD       = 3
	workerPartitionFD = 4
)

// workerRequest is what the backend sends a worker on its standard input.
type workerRequest struct {
	ParentPID int
	KeyDigest [32]byte // the key file's header digest, checked again by the worker
	Partition sdk.PartitionHandle
	Threads   int
}

// workerResponse is what a worker writes to its standard output.
type workerResponse struct {
	Proof   []byte // gnark's encoding (Proof.WriteTo)
	Timings Timings
	Kind    sdk.ErrorKind // with Err, a failed proof
	Err     string
}

// Worker proves partitions in child processes of Path, one per proof, which a
// cancelled context kills at once. Path is a binary that calls ServeWorker when
// its first argument is WorkerArg (usually the backend's own executable).
type Worker struct {
	Path    string
	Threads int          // goroutines per proof (0: all cores)
	Log     hclog.Logger // receives the workers' stderr lines; nil discards them
	// Started and Ended, when set, are told of each worker process, for
	// accounting its CPU time (Ended gets its state once reaped).
	Started func(pid int)
	Ended   func(pid int, st *os.ProcessState)
}

// Prove proves partition h with the key in keyFile (an open key file whose header
// digest is keyDigest, already checked by the caller) in a worker process, killing
// it if ctx ends first (then the error is ctx.Err()). It returns the proof in
// gnark's encoding. The partition file is opened here and checked to be the inode
// h names; the caller keeps its own mapping open meanwhile.
func (w *Worker) Prove(ctx context.Context, keyFile *os.File, keyDigest [32]byte, h sdk.PartitionHandle) ([]byte, Timings, error) {
	// The worker inherits the partition open: the file opened here must be the
	// one OpenPartition checked (its seals, its layout). The caller still maps
	// that file, so its inode is not reused meanwhile: the same inode is the
	// same sealed file, whatever the host did with its descriptor number.
	part, err := os.Open(h.Path)
	if err != nil {
		return nil, Timings{}, sdk.Errorf(sdk.ErrInvalidArgument, "partition file %s: %v", h.Path, err)
	}
	defer part.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(part.Fd()), &st); err != nil {
		return nil, Timings{}, sdk.Errorf(sdk.ErrInternal, "partition file %s: %v", h.Path, err)
	}
	if uint64(st.Ino) != h.Inode {
		return nil, Timings{}, sdk.Errorf(sdk.ErrInvalidArgument, "partition file %s: inode %d, the handle says %d (not the partition it names)", h.Path, st.Ino, h.Inode)
	}

	var req bytes.Buffer
	if err := gob.NewEncoder(&req).Encode(workerRequest{ParentPID: os.Getpid(), KeyDigest: keyDigest, Partition: h, Threads: w.Threads}); err != nil {
		return nil, Timings{}, sdk.Errorf(sdk.ErrInternal, "prove worker: encoding the request: %v", err)
	}
	var out bytes.Buffer
	log := w.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	stderr := &linetail.Tail{Keep: 5, OnLine: func(line string) { log.Warn("prove worker", "stderr", line) }}
	cmd := exec.Command(w.Path, WorkerArg)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &req, &out, stderr
	cmd.ExtraFiles = []*os.File{keyFile, part}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}

	// The parent-death signal fires when the thread that started the child exits,
	// and Go may end idle threads: keep this one until the child is reaped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return nil, Timings{}, sdk.Errorf(sdk.ErrInternal, "prove worker: starting %s: %v", w.Path, err)
	}
	if w.Started != nil {
		w.Started(cmd.Process.Pid)
	}
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if w.Ended != nil {
			w.Ended(cmd.Process.Pid, cmd.ProcessState)
		}
		waited <- err
	}()
	select {
	case err = <-waited:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-waited
		return nil, Timings{}, ctx.Err()
	}
	stderr.Flush()
	if err != nil {
		return nil, Timings{}, sdk.Errorf(sdk.ErrInternal, "prove worker: %v (its last words: %q)", err, stderr.String())
	}
	var resp workerResponse
	if err := gob.NewDecoder(&out).Decode(&resp); err != nil {
		return nil, Timings{}, sdk.Errorf(sdk.ErrInternal, "prove worker: decoding its answer: %v", err)
	}
	if resp.Err != "" {
		return nil, resp.Timings, sdk.Errorf(resp.Kind, "%s", resp.Err)
	}
	return resp.Proof, resp.Timings, nil
}

// ServeWorker runs one proof as a worker: it reads the request from standard
// input, proves with the descriptors it inherited, writes the answer to standard
// output and returns the process's exit code. A binary whose first argument is
// WorkerArg calls it instead of serving.
func ServeWorker() int {
	// Die with the backend: a killed backend must not leave a proof computing.
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	var req workerRequest
	if err := gob.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "prove worker: reading the request:", err)
		return 2
	}
	if os.Getppid() != req.ParentPID {
		fmt.Fprintln(os.Stderr, "prove worker: the backend that started it is gone")
		return 2
	}
	resp := workerProve(req)
	if err := gob.NewEncoder(os.Stdout).Encode(resp); err != nil {
		fmt.Fprintln(os.Stderr, "prove worker: writing the answer:", err)
		return 2
	}
	return 0
}

// workerProve maps the inherited key and partition and proves.
func workerProve(req workerRequest) workerResponse {
	fail := func(err error) workerResponse {
		return workerResponse{Kind: sdk.KindOf(err), Err: err.Error()}
	}
	kf, err := keyfile.Open(fmt.Sprintf("/proc/self/fd/%d", workerKeyFD))
	if err != nil {
		return fail(fmt.Errorf("prove worker: the key file: %w", err))
	}
	defer kf.Close()
	if kf.HeaderDigest() != req.KeyDigest {
		return fail(sdk.Errorf(sdk.ErrDigestMismatch, "prove worker: the key file's header digest is %x, the backend loaded %x", kf.HeaderDigest(), req.KeyDigest))
	}
	h := req.Partition
	h.Path = fmt.Sprintf("/proc/self/fd/%d", workerPartitionFD)
	part, err := mapPartition(h)
	if err != nil {
		return fail(err)
	}
	defer unix.Munmap(part)
	w := elementsAt(part, h.WOffset, h.NbWires)
	a := elementsAt(part, h.AOffset, h.NbConstraints)
	bv := elementsAt(part, h.BOffset, h.NbConstraints)
	proof, timings, err := Prove(context.Background(), kf.Key(), w, a, bv, req.Threads)
	if err != nil {
		resp := fail(err)
		resp.Timings = timings
		return resp
	}
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		return fail(fmt.Errorf("prove: encoding the proof: %w", err))
	}
	return workerResponse{Proof: buf.Bytes(), Timings: timings}
}

// mapPartition maps the partition file the backend already opened and checked
// (its layout against the handle, its inode and seals): the worker checks only
// that the size still matches.
func mapPartition(h sdk.PartitionHandle) ([]byte, error) {
	f, err := os.Open(h.Path)
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "prove worker: the partition: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "prove worker: the partition: %v", err)
	}
	if fi.Size() != h.Size {
		return nil, sdk.Errorf(sdk.ErrInvalidArgument, "prove worker: the partition has %d bytes, the handle says %d", fi.Size(), h.Size)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(h.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrResourceExhausted, "prove worker: mapping the partition (%d bytes): %v", h.Size, err)
	}
	return data, nil
}

// elementsAt views n field elements of a mapping from byte offset off, without
// copying (sections start on page boundaries, so the view is aligned).
func elementsAt(data []byte, off, n uint64) []fr.Element {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*fr.Element)(unsafe.Pointer(&data[off])), n)
}
