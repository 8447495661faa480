package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zkhost/zkhost/cpubackend"
	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/client"
	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
	"github.com/zkhost/zkhost/sdk/procfs"
	"github.com/zkhost/zkhost/sdk/shm"
)

// deviceConf is one [[device]] of a test config.
type deviceConf struct {
	Backend  string // binary path
	SHA256   string
	InFlight int
	Options  map[string]string
	// Raw is appended inside the [[device]] table (e.g. a selector).
	Raw string
}

// hostConf is what a test sets in the daemon's config; zero fields take the
// tests' defaults, which keep retries and restarts quick.
type hostConf struct {
	Devices      []deviceConf
	MaxAttempts  int
	ProveTimeout time.Duration
	CrashLimit   int
	CrashWindow  time.Duration
	// Circuits replaces the default [[circuit]] tables (chain and merkle).
	Circuits string
	// API is the body of the [api] table (the socket is always set).
	API string
	// Synthesis workers; 0 means 1.
	Workers int
	// NoPreload turns off loading keys at start ([keys] preload), for tests
	// of what happens when a key is loaded on demand.
	NoPreload bool
	// Extra is appended to the config (a [cluster] table).
	Extra string
	// ReadyLog, when set, is the log line that says the host is up, for a
	// host that serves no API (a cluster's synthesis host).
	ReadyLog string
}

// cpuDevice is a CPU backend device with one proving thread.
func cpuDevice() deviceConf {
	return deviceConf{Backend: cpuBin(), Options: map[string]string{"threads": "1"}}
}

// faultDevice is a fault backend device with the given options, one thread.
func faultDevice(opts map[string]string) deviceConf {
	o := map[string]string{"threads": "1"}
	for k, v := range opts {
		o[k] = v
	}
	return deviceConf{Backend: faultBin(), Options: o}
}

func (c hostConf) toml(stateDir, socket string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state_dir = %q\nlog_level = \"debug\"\n\n", stateDir)
	fmt.Fprintf(&b, "[api]\nsocket = %q\n%s\n\n", socket, c.API)
	fmt.Fprintf(&b, "[budget]\nbytes = \"2GiB\"\n\n")
	fmt.Fprintf(&b, "[synthesis]\nworkers = %d\nthreads = 1\n\n", max(1, c.Workers))
	if c.NoPreload {
		b.WriteString("[keys]\npreload = false\n\n")
	}
	fmt.Fprintf(&b, "[retry]\nmax_attempts = %d\nbackoff_base = \"50ms\"\nbackoff_max = \"400ms\"\nprove_timeout = %q\n\n",
		orInt(c.MaxAttempts, 3), orDuration(c.ProveTimeout, time.Minute).String())
	fmt.Fprintf(&b, "[health]\ncrash_limit = %d\ncrash_window = %q\n\n", orInt(c.CrashLimit, 100), orDuration(c.CrashWindow, 10*time.Minute).String())
	if c.Circuits != "" {
		b.WriteString(c.Circuits)
	} else {
		fmt.Fprintf(&b, "[[circuit]]\nname = \"chain\"\nkeys = %q\n\n[[circuit]]\nname = \"merkle\"\nkeys = %q\n\n", keyDir, keyDir)
	}
	for _, d := range c.Devices {
		fmt.Fprintf(&b, "\n[[device]]\nbackend = %q\n", d.Backend)
		if d.SHA256 != "" {
			fmt.Fprintf(&b, "sha256 = %q\n", d.SHA256)
		}
		if d.InFlight > 0 {
			fmt.Fprintf(&b, "in_flight = %d\n", d.InFlight)
		}
		if d.Raw != "" {
			b.WriteString(d.Raw + "\n")
		}
		if len(d.Options) > 0 {
			b.WriteString("[device.options]\n")
			keys := make([]string, 0, len(d.Options))
			for k := range d.Options {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "%q = %q\n", k, d.Options[k])
			}
		}
	}
	if c.Extra != "" {
		b.WriteString("\n" + c.Extra + "\n")
	}
	return b.String()
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orDuration(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// host is one `zkhost serve` process (restartable on the same state).
type host struct {
	t        testing.TB
	dir      string
	stateDir string
	socket   string
	cfgPath  string
	logPath  string
	// args are added to `zkhost serve --config <cfgPath>` at each start.
	args []string
	// readyLog is hostConf.ReadyLog.
	readyLog string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	pids   []int // every pid this host ran as

	client *client.Client
	conn   *grpc.ClientConn
	raw    zkhostv1.ZkhostClient
}

// newHost writes the config of a daemon with its own state directory; start runs it.
func newHost(t testing.TB, conf hostConf) *host {
	t.Helper()
	dir := t.TempDir()
	h := &host{
		t:        t,
		dir:      dir,
		stateDir: filepath.Join(dir, "state"),
		socket:   filepath.Join(dir, "zk.sock"),
		cfgPath:  filepath.Join(dir, "zkhost.toml"),
		logPath:  filepath.Join(dir, "serve.log"),
	}
	if err := os.MkdirAll(h.stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	h.readyLog = conf.ReadyLog
	h.writeConfig(conf)
	t.Cleanup(h.cleanup)
	return h
}

func (h *host) writeConfig(conf hostConf) {
	if err := os.WriteFile(h.cfgPath, []byte(conf.toml(h.stateDir, h.socket)), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// start runs the daemon and waits until its API answers.
func (h *host) start() {
	h.t.Helper()
	if err := h.tryStart(60 * time.Second); err != nil {
		h.t.Fatalf("%v\n%s", err, h.logTail(60))
	}
}

func (h *host) tryStart(timeout time.Duration) error {
	logf, err := os.OpenFile(h.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "==== e2e: starting zkhost serve at %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(zkhostBin(), append([]string{"serve", "--config", h.cfgPath}, h.args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(exited)
	}()
	h.mu.Lock()
	h.cmd, h.exited = cmd, exited
	h.pids = append(h.pids, cmd.Process.Pid)
	h.mu.Unlock()

	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("zkhost serve exited while starting: %v", cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
		if h.readyLog != "" {
			if strings.Contains(h.logText(), h.readyLog) {
				return nil
			}
			continue
		}
		if _, err := os.Stat(h.socket); err != nil {
			continue
		}
		c, err := client.Dial(h.socket, client.Options{})
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = c.Status(ctx)
		cancel()
		if err != nil {
			c.Close()
			continue
		}
		conn, err := grpc.NewClient("unix://"+h.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			c.Close()
			return err
		}
		h.mu.Lock()
		h.client, h.conn, h.raw = c, conn, zkhostv1.NewZkhostClient(conn)
		h.mu.Unlock()
		return nil
	}
	return fmt.Errorf("zkhost serve did not answer within %s", timeout)
}

// pid is the running daemon's process id.
func (h *host) pid() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cmd.Process.Pid
}

func (h *host) closeClients() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client != nil {
		h.client.Close()
		h.conn.Close()
		h.client, h.conn, h.raw = nil, nil, nil
	}
}

// process closes the clients and returns the daemon's process and the channel
// closed when it exits; cmd is nil when the daemon was never started.
func (h *host) process() (cmd *exec.Cmd, exited chan struct{}) {
	h.closeClients()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cmd, h.exited
}

// kill SIGKILLs the daemon (a host crash) and waits for it to be gone.
func (h *host) kill() {
	h.t.Helper()
	cmd, exited := h.process()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// stop asks the daemon to stop (SIGTERM) and waits; it fails the test when the
// daemon does not stop cleanly within 30 seconds.
func (h *host) stop() {
	h.t.Helper()
	cmd, exited := h.process()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if st := cmd.ProcessState; st != nil && !st.Success() {
			h.t.Errorf("zkhost serve exited with %v after SIGTERM\n%s", st, h.logTail(40))
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		h.t.Errorf("zkhost serve did not stop within 30s of SIGTERM\n%s", h.logTail(40))
	}
}

// running reports whether the daemon process is alive.
func (h *host) running() bool {
	h.mu.Lock()
	exited := h.exited
	h.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

func (h *host) cleanup() {
	if h.running() {
		cmd, exited := h.process()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-exited
		}
	}
	// Whatever a test did, leave no process behind.
	h.mu.Lock()
	pids := append([]int(nil), h.pids...)
	h.mu.Unlock()
	for _, p := range pids {
		for _, b := range backendsOf(p) {
			_ = syscall.Kill(b.pid, syscall.SIGKILL)
		}
	}
	if h.t.Failed() {
		h.t.Logf("daemon log (%s), last lines:\n%s", h.logPath, h.logTail(80))
	}
}

// logText returns the daemon's whole log (every start).
func (h *host) logText() string {
	b, _ := os.ReadFile(h.logPath)
	return string(b)
}

func (h *host) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(h.logText(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ctx returns a context bounded by d for one call.
func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// submit submits a job of n valid partitions of circuit name with seed.
func (h *host) submit(name string, seed uint64, n int, class api.Class) api.Job {
	h.t.Helper()
	job, err := h.client.Submit(ctxFor(h.t, 30*time.Second), api.SubmitRequest{
		Circuit: name, Witnesses: witnesses(h.t, name, seed, n), Class: class,
	})
	if err != nil {
		h.t.Fatalf("submit %s: %v", name, err)
	}
	return job
}

// await follows a job to its end and returns it with every event seen.
func (h *host) await(id string, timeout time.Duration) (api.Job, []api.JobEvent) {
	h.t.Helper()
	var events []api.JobEvent
	job, err := h.client.Await(ctxFor(h.t, timeout), id, func(e api.JobEvent) error {
		events = append(events, e)
		return nil
	})
	if err != nil {
		h.t.Fatalf("await job %s: %v", id, err)
	}
	return job, events
}

// status returns the daemon's status report.
func (h *host) status() api.StatusReport {
	h.t.Helper()
	s, err := h.client.Status(ctxFor(h.t, 10*time.Second))
	if err != nil {
		h.t.Fatalf("status: %v", err)
	}
	return s
}

// device returns the status of device name.
func (h *host) device(name string) api.DeviceStatus {
	h.t.Helper()
	for _, d := range h.status().Devices {
		if d.Name == name {
			return d
		}
	}
	h.t.Fatalf("no device %s in status", name)
	return api.DeviceStatus{}
}

// checkDone fails the test unless job is done with every partition's proof
// verifying (gnark's groth16.Verify, public witness derived by the test).
func checkDone(t testing.TB, job api.Job, name string, seed uint64, n int) {
	t.Helper()
	if job.State != api.JobDone {
		t.Fatalf("job %s is %s, want done (error: %s)", job.ID, job.State, job.Error)
	}
	if len(job.Partitions) != n {
		t.Fatalf("job %s has %d partitions, want %d", job.ID, len(job.Partitions), n)
	}
	for i, p := range job.Partitions {
		if p.State != api.PartitionVerified || len(p.Proof) == 0 {
			t.Fatalf("job %s partition %d is %s with %d proof bytes", job.ID, i, p.State, len(p.Proof))
		}
		if err := verifyProof(name, seed, i, p.Proof, p.PublicWitness); err != nil {
			t.Fatalf("job %s: %v", job.ID, err)
		}
	}
}

// linkBinary gives a binary a second name in dir (a hard link, or a copy), so two
// devices running the same backend can be told apart by their executable path.
func linkBinary(t testing.TB, src, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.Link(src, dst); err == nil {
		return dst
	}
	copyFile(t, src, dst, 0o755)
	return dst
}

func copyFile(t testing.TB, src, dst string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// proc is a backend process found in /proc.
type proc struct {
	pid    int
	exe    string // argv[0]
	worker bool   // a process a backend started (the CPU backend's prove workers), not a backend
}

// backendsOf lists the live backend processes started by the host with pid
// hostPID, and their prove workers, found by the ZKHOST_BACKEND_PARENT_PID
// variable plugins.Launch puts in their environment (which workers inherit), so
// they are found after the host died, too. Zombies are not counted: they hold no
// device and no memory.
func backendsOf(hostPID int) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	marker := []byte("ZKHOST_BACKEND_PARENT_PID=" + strconv.Itoa(hostPID) + "\x00")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, marker) || !alive(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		exe, args, _ := bytes.Cut(cmdline, []byte{0})
		// A backend's prove worker says so in its arguments once it runs; in
		// the moment between its fork and its exec it is a copy of the
		// backend (same arguments and environment) whose parent is the
		// backend, not the host.
		worker := bytes.HasPrefix(args, []byte(cpubackend.WorkerArg+"\x00")) || !isChild(pid, hostPID)
		out = append(out, proc{pid: pid, exe: string(exe), worker: worker})
	}
	return out
}

// isChild reports whether pid's parent is parent.
func isChild(pid, parent int) bool {
	ppid, ok := procfs.Parent("/proc", pid)
	return ok && ppid == parent
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := strings.LastIndexByte(line, ')')
	if i < 0 || i+2 >= len(line) {
		return false
	}
	st := line[i+2]
	return st != 'Z' && st != 'X'
}

// backendPID returns the pid of the host's backend whose executable is exe,
// waiting up to timeout for one to run.
func (h *host) backendPID(exe string, timeout time.Duration) int {
	h.t.Helper()
	var pid int
	apitest.WaitFor(h.t, timeout, "a backend process "+exe, func() bool {
		for _, b := range backendsOf(h.pid()) {
			if b.exe == exe && !b.worker {
				pid = b.pid
				return true
			}
		}
		return false
	})
	return pid
}

// shmFiles lists the partitions (sealed memfds) the running daemon holds; none
// once it is gone (a memfd dies with the last process that holds or maps it).
func (h *host) shmFiles() []string {
	names, err := shm.Held(h.pid())
	if err != nil {
		h.t.Fatal(err)
	}
	return names
}

// eventsOf selects the events of one kind.
func eventsOf(events []api.JobEvent, kind api.EventKind) []api.JobEvent {
	var out []api.JobEvent
	for _, e := range events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
