package refprover

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/linetail"
)

// Proofs computed in a worker process.
//
// gnark-crypto's multi-scalar multiplications cannot be interrupted, and cutting
// them into chunks to check a context between them costs work, the more the smaller
// the MSM: each chunk pays its own bucket reduction and a smaller window
// (BENCHMARKS.md, "The CPU backend's prove worker"). A proof's MSMs are most of
// its time, so a cancelled proof would run on for most of its length. A worker
// process computes proofs instead, and a cancel kills it at once: cancellation
// reaches every phase at no cost to the MSMs.
//
// A worker is started for a key (Worker.Start) and proves one partition after
// another with it until it is closed or killed, so a proof does not pay a process
// start, the key's mapping and page table, or the FFT domain's tables (the
// domain is built once, when the worker starts). Worker.Prove is the one-shot
// form: a process for one proof. The child maps the same key file as the backend
// through a descriptor it inherits, and gets each partition's descriptor with
// its request (SCM_RIGHTS on a socket pair), so it reads the very files the
// backend checked; it dies with the backend (PR_SET_PDEATHSIG).
//
// A worker keeps its last proof's heap for the next proof while proofs follow one
// another: giving it back to the system after each proof and faulting it in again
// cost as much as a fresh process per proof did (BENCHMARKS.md). It gives it back
// (debug.FreeOSMemory) when no request came for WorkerIdleRelease, or when the
// backend asks (WorkerProcess.Release, before another key's worker computes), so
// an idle worker holds the key's mapping (shared with the backend's), the domain's
// tables (DomainBytes) and its runtime, not a proof's heap, which the host counts
// only while a proof is in flight.

// WorkerArg is the first argument that makes a backend binary run as a prove
// worker (ServeWorker) instead of serving: a binary that is its own Worker.Path
// checks for it first thing in main.
const WorkerArg = "-zkhost-prove-worker"

// The descriptors a worker inherits (exec.Cmd.ExtraFiles start at 3).
const (
	workerKeyFD    = 3
	workerSocketFD = 4
)

// workerMaxMessage bounds one message on the worker's socket (a request, an
// answer: a proof is a few hundred bytes).
const workerMaxMessage = 1 << 20

// workerHello is the first message a worker gets: what it proves with.
type workerHello struct {
	ParentPID int
	KeyDigest [32]byte // the key file's header digest, checked again by the worker
	Threads   int
}

// workerRequest is one proof to compute, the partition's descriptor travelling
// with it, or (Release) a request to give the last proof's heap back.
type workerRequest struct {
	Partition sdk.PartitionHandle
	Release   bool
}

// WorkerIdleRelease is how long a worker keeps its last proof's heap waiting for
// the next request before it gives it back to the system.
const WorkerIdleRelease = time.Second

// workerResponse answers the hello (Ready, or Err) and each request.
type workerResponse struct {
	Ready   bool
	Proof   []byte // gnark's encoding (Proof.WriteTo)
	Timings Timings
	Kind    sdk.ErrorKind // with Err, a failure
	Err     string
}

// Worker says how to start prove workers. Path is a binary that calls
// ServeWorker when its first argument is WorkerArg (usually the backend's own
// executable).
type Worker struct {
	Path    string
	Threads int          // goroutines per proof (0: all cores)
	Log     hclog.Logger // receives the workers' stderr lines; nil discards them
	// Started and Ended, when set, are told of each worker process, for
	// accounting its CPU time (Ended gets its state once reaped).
	Started func(pid int)
	Ended   func(pid int, st *os.ProcessState)
}

// WorkerProcess is a running worker that proves with one key. Its methods are
// safe for concurrent use; proofs run one at a time.
type WorkerProcess struct {
	cmd    *exec.Cmd
	conn   *net.UnixConn
	stderr *linetail.Tail
	pid    int

	mu sync.Mutex // one exchange on the socket at a time

	exited  chan struct{} // closed once the process is reaped
	waitErr error         // its exit, once exited is closed
}

// Prove proves partition h in a process of its own (Start, one proof, Close),
// killing it if ctx ends first (then the error is ctx.Err()). keyFile is an open
// key file whose header digest is keyDigest, already checked by the caller. It
// returns the proof in gnark's encoding.
func (w *Worker) Prove(ctx context.Context, keyFile *os.File, keyDigest [32]byte, h sdk.PartitionHandle) ([]byte, Timings, error) {
	p, err := w.Start(ctx, keyFile, keyDigest)
	if err != nil {
		return nil, Timings{}, err
	}
	defer p.Close()
	return p.Prove(ctx, h)
}

// Start starts a worker for the key in keyFile (an open key file whose header
// digest is keyDigest, already checked by the caller) and waits until it has
// mapped the key and built its FFT domain. If ctx ends first the worker is killed
// and the error is ctx.Err().
func (w *Worker) Start(ctx context.Context, keyFile *os.File, keyDigest [32]byte) (*WorkerProcess, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "prove worker: socket pair: %v", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "prove-worker-socket")
	theirs := os.NewFile(uintptr(fds[1]), "prove-worker-socket")
	defer theirs.Close()
	fc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		return nil, sdk.Errorf(sdk.ErrInternal, "prove worker: socket pair: %v", err)
	}
	log := w.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	p := &WorkerProcess{
		conn:   fc.(*net.UnixConn),
		stderr: &linetail.Tail{Keep: 5, OnLine: func(line string) { log.Warn("prove worker", "stderr", line) }},
		exited: make(chan struct{}),
	}
	p.cmd = exec.Command(w.Path, WorkerArg)
	p.cmd.Stderr = p.stderr
	p.cmd.ExtraFiles = []*os.File{keyFile, theirs}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.Env = workerEnv(os.Environ())

	// The parent-death signal fires when the thread that started the child exits,
	// and Go may end idle threads: the goroutine that starts the child keeps its
	// thread until the child is reaped.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		p.pid = p.cmd.Process.Pid
		if w.Started != nil {
			w.Started(p.pid)
		}
		started <- nil
		p.waitErr = p.cmd.Wait()
		if w.Ended != nil {
			w.Ended(p.pid, p.cmd.ProcessState)
		}
		p.conn.Close() // a reader waiting on a dead worker sees the end
		close(p.exited)
	}()
	if err := <-started; err != nil {
		p.conn.Close()
		return nil, sdk.Errorf(sdk.ErrInternal, "prove worker: starting %s: %v", w.Path, err)
	}
	hello := workerHello{ParentPID: os.Getpid(), KeyDigest: keyDigest, Threads: w.Threads}
	resp, err := p.exchange(ctx, hello, nil)
	if err != nil {
		p.Close()
		return nil, err
	}
	if resp.Err != "" || !resp.Ready {
		p.Close()
		if resp.Err == "" {
			resp.Err = "prove worker: it did not say it was ready"
		}
		return nil, sdk.Errorf(resp.Kind, "%s", resp.Err)
	}
	return p, nil
}

// workerEnv is the environment a worker runs with: env (the backend's) with the
// Go runtime set to give freed memory back with MADV_FREE instead of
// MADV_DONTNEED (GODEBUG madvdontneed=0). A proof frees and allocates again
// hundreds of megabytes (its vectors; the MSMs' bucket tables, on the stacks of
// goroutines that come and go), and the runtime hands free pages back while it
// runs: after MADV_DONTNEED each reuse faults the pages in again, zeroed by the
// kernel, where pages after MADV_FREE stay mapped until the kernel needs them
// and cost nothing to reuse (BENCHMARKS.md, "The CPU backend against gnark, one
// more time"). Such pages are reclaimed at once, without I/O, when memory is
// short, so the memory the host no longer counts is still there for others;
// only the worker's resident size, as top shows it, stays up until then. A
// madvdontneed already in the backend's GODEBUG comes later and wins.
func workerEnv(env []string) []string {
	const setting = "madvdontneed=0"
	out := slices.Clone(env)
	for i, kv := range out {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			out[i] = "GODEBUG=" + setting + "," + v
			return out
		}
	}
	return append(out, "GODEBUG="+setting)
}

// Pid is the worker's process ID.
func (p *WorkerProcess) Pid() int { return p.pid }

// Alive reports whether the worker can take another proof: it has not exited,
// been killed or been closed.
func (p *WorkerProcess) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Close kills the worker and waits until it is reaped. A proof it computes fails.
func (p *WorkerProcess) Close() error {
	_ = p.cmd.Process.Kill()
	<-p.exited
	return nil
}

// Prove proves partition h with the worker's key, killing the worker if ctx ends
// first (then the error is ctx.Err(), and the worker is gone). It returns the
// proof in gnark's encoding. The partition file is opened here, checked to be the
// inode h names, and handed to the worker; the caller keeps its own mapping open
// meanwhile.
func (p *WorkerProcess) Prove(ctx context.Context, h sdk.PartitionHandle) ([]byte, Timings, error) {
	// The worker gets the partition open: the file opened here must be the one
	// OpenPartition checked (its seals, its layout). The caller still maps that
	// file, so its inode is not reused meanwhile: the same inode is the same
	// sealed file, whatever the host did with its descriptor number.
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
	resp, err := p.exchange(ctx, workerRequest{Partition: h}, part)
	if err != nil {
		return nil, Timings{}, err
	}
	if resp.Err != "" {
		return nil, resp.Timings, sdk.Errorf(resp.Kind, "%s", resp.Err)
	}
	return resp.Proof, resp.Timings, nil
}

// Release asks the worker to give its last proof's heap back to the system now
// and waits until it has (a worker does so by itself after WorkerIdleRelease).
func (p *WorkerProcess) Release(ctx context.Context) error {
	resp, err := p.exchange(ctx, workerRequest{Release: true}, nil)
	if err == nil && resp.Err != "" {
		err = sdk.Errorf(resp.Kind, "%s", resp.Err)
	}
	return err
}

// exchange sends msg (with file's descriptor, when not nil) and reads the
// answer. If ctx ends first the worker is killed and the error is ctx.Err().
func (p *WorkerProcess) exchange(ctx context.Context, msg any, file *os.File) (workerResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.Alive() {
		return workerResponse{}, p.deadError("it had exited before the request")
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(msg); err != nil {
		return workerResponse{}, sdk.Errorf(sdk.ErrInternal, "prove worker: encoding the request: %v", err)
	}
	var oob []byte
	if file != nil {
		oob = unix.UnixRights(int(file.Fd()))
	}
	if _, _, err := p.conn.WriteMsgUnix(buf.Bytes(), oob, nil); err != nil {
		return workerResponse{}, p.deadError(fmt.Sprintf("sending the request: %v", err))
	}
	type answer struct {
		resp workerResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		var a answer
		a.resp, a.err = readResponse(p.conn)
		answered <- a
	}()
	select {
	case a := <-answered:
		if a.err != nil {
			return workerResponse{}, p.deadError(a.err.Error())
		}
		return a.resp, nil
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		<-p.exited
		<-answered
		return workerResponse{}, ctx.Err()
	}
}

// deadError describes a worker that failed to answer, with its exit status
// and last words once it is reaped.
func (p *WorkerProcess) deadError(what string) error {
	_ = p.cmd.Process.Kill() // a worker that cannot answer is no use
	<-p.exited
	p.stderr.Flush()
	exit := fmt.Sprint(p.waitErr)
	if st := p.cmd.ProcessState; st != nil {
		exit = st.String() // "exit status 1", "signal: killed"
	}
	return sdk.Errorf(sdk.ErrInternal, "prove worker: %s (%s; its last words: %q)", what, exit, p.stderr.String())
}

// readResponse reads one answer from the worker's socket.
func readResponse(conn *net.UnixConn) (workerResponse, error) {
	buf := make([]byte, workerMaxMessage)
	n, _, flags, _, err := conn.ReadMsgUnix(buf, nil)
	if err != nil {
		return workerResponse{}, fmt.Errorf("reading its answer: %w", err)
	}
	if n == 0 {
		return workerResponse{}, errors.New("reading its answer: it closed its socket")
	}
	if flags&unix.MSG_TRUNC != 0 {
		return workerResponse{}, fmt.Errorf("reading its answer: longer than %d bytes", workerMaxMessage)
	}
	var resp workerResponse
	if err := gob.NewDecoder(bytes.NewReader(buf[:n])).Decode(&resp); err != nil {
		return workerResponse{}, fmt.Errorf("decoding its answer: %w", err)
	}
	return resp, nil
}

// ServeWorker runs a worker: it reads the hello from the socket it inherited,
// maps the key, builds its domain, says it is ready, then proves each request
// until the socket closes, and returns the process's exit code. A binary whose
// first argument is WorkerArg calls it instead of serving.
func ServeWorker() int {
	// Die with the backend: a killed backend must not leave a proof computing.
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	fc, err := net.FileConn(os.NewFile(workerSocketFD, "prove-worker-socket"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "prove worker: the socket:", err)
		return 2
	}
	conn, ok := fc.(*net.UnixConn)
	if !ok {
		fmt.Fprintf(os.Stderr, "prove worker: descriptor %d is a %T, not a Unix socket\n", workerSocketFD, fc)
		return 2
	}
	buf := make([]byte, workerMaxMessage)
	oob := make([]byte, unix.CmsgSpace(4))
	var hello workerHello
	if _, err := readRequest(conn, buf, oob, &hello); err != nil {
		fmt.Fprintln(os.Stderr, "prove worker: reading the hello:", err)
		return 2
	}
	if os.Getppid() != hello.ParentPID {
		fmt.Fprintln(os.Stderr, "prove worker: the backend that started it is gone")
		return 2
	}
	kf, prover, err := workerKey(hello)
	if err != nil {
		_ = writeResponse(conn, workerResponse{Kind: sdk.KindOf(err), Err: err.Error()})
		return 2
	}
	defer kf.Close()
	if err := writeResponse(conn, workerResponse{Ready: true}); err != nil {
		fmt.Fprintln(os.Stderr, "prove worker: writing the answer:", err)
		return 2
	}
	held := false // whether the last proof's heap is kept
	for {
		deadline := time.Time{}
		if held {
			deadline = time.Now().Add(WorkerIdleRelease)
		}
		if err := conn.SetReadDeadline(deadline); err != nil {
			fmt.Fprintln(os.Stderr, "prove worker: the socket:", err)
			return 2
		}
		var req workerRequest
		fd, err := readRequest(conn, buf, oob, &req)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			debug.FreeOSMemory() // idle: the host counts a proof's memory only while it is in flight
			held = false
			continue
		}
		if errors.Is(err, io.EOF) {
			return 0 // the backend closed the socket: no more proofs
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "prove worker: reading a request:", err)
			return 2
		}
		var resp workerResponse
		if req.Release {
			if fd >= 0 {
				unix.Close(fd)
			}
			debug.FreeOSMemory()
			held = false
		} else {
			resp = workerProve(prover, req, fd, hello.Threads)
			held = true
		}
		if err := writeResponse(conn, resp); err != nil {
			fmt.Fprintln(os.Stderr, "prove worker: writing the answer:", err)
			return 2
		}
		runtime.KeepAlive(prover)
	}
}

// workerKey maps the inherited key file, checks its header digest and builds
// (and holds) its FFT domain.
func workerKey(hello workerHello) (*keyfile.File, *KeyProver, error) {
	kf, err := keyfile.Open(fmt.Sprintf("/proc/self/fd/%d", workerKeyFD))
	if err != nil {
		return nil, nil, fmt.Errorf("prove worker: the key file: %w", err)
	}
	if kf.HeaderDigest() != hello.KeyDigest {
		kf.Close()
		return nil, nil, sdk.Errorf(sdk.ErrDigestMismatch, "prove worker: the key file's header digest is %x, the backend loaded %x", kf.HeaderDigest(), hello.KeyDigest)
	}
	prover, err := NewKeyProver(kf)
	if err != nil {
		kf.Close()
		return nil, nil, err
	}
	return kf, prover, nil
}

// readRequest reads one message into v and returns the descriptor that came
// with it (-1 when none did); io.EOF when the socket closed.
func readRequest(conn *net.UnixConn, buf, oob []byte, v any) (int, error) {
	n, oobn, flags, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return -1, err
	}
	fd := -1
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return -1, fmt.Errorf("control message: %w", err)
		}
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				return -1, fmt.Errorf("control message: %w", err)
			}
			for _, f := range fds {
				if fd < 0 {
					fd = f
				} else {
					unix.Close(f)
				}
			}
		}
	}
	if n == 0 && oobn == 0 {
		return -1, io.EOF
	}
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("a message longer than %d bytes", len(buf))
	}
	if err := gob.NewDecoder(bytes.NewReader(buf[:n])).Decode(v); err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("decoding: %w", err)
	}
	return fd, nil
}

// writeResponse writes one answer to the socket.
func writeResponse(conn *net.UnixConn, resp workerResponse) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(resp); err != nil {
		return err
	}
	if buf.Len() > workerMaxMessage {
		return fmt.Errorf("the answer has %d bytes, more than %d", buf.Len(), workerMaxMessage)
	}
	_, _, err := conn.WriteMsgUnix(buf.Bytes(), nil, nil)
	return err
}

// workerProve maps the partition whose descriptor came with req and proves it.
func workerProve(prover *KeyProver, req workerRequest, fd, threads int) workerResponse {
	fail := func(err error) workerResponse {
		return workerResponse{Kind: sdk.KindOf(err), Err: err.Error()}
	}
	if fd < 0 {
		return fail(sdk.Errorf(sdk.ErrInternal, "prove worker: the request came without the partition's descriptor"))
	}
	f := os.NewFile(uintptr(fd), "partition")
	defer f.Close()
	h := req.Partition
	part, err := mapPartition(f, h)
	if err != nil {
		return fail(err)
	}
	defer unix.Munmap(part)
	vector := func(off, n uint64) []byte { return part[off : off+n*sdk.ElementSize] }
	proof, timings, err := prover.Prove(context.Background(), vector(h.WOffset, h.NbWires),
		vector(h.AOffset, h.NbConstraints), vector(h.BOffset, h.NbConstraints), threads)
	if err != nil {
		resp := fail(err)
		resp.Timings = timings
		return resp
	}
	return workerResponse{Proof: proof, Timings: timings}
}

// mapPartition maps the partition file the backend already opened and checked
// (its layout against the handle, its inode and seals): the worker checks only
// that the size still matches.
func mapPartition(f *os.File, h sdk.PartitionHandle) ([]byte, error) {
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
