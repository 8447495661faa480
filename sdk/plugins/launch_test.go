package plugins_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/plugins"
	"github.com/zkhost/zkhost/sdk/procfs"
	"github.com/zkhost/zkhost/sdk/sdktest"
	"github.com/zkhost/zkhost/sdk/shm"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// fakeBackend is the path of the SDK's fake backend (sdk/sdktest/testdata/fakebackend,
// which sdktest's own test also uses), built once by TestMain.
var fakeBackend string

const helperEnv = "PLUGINS_TEST_HELPER_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		helperParent()
		return
	}
	os.Exit(sdktest.MainWithFakeBackend(m, &fakeBackend))
}

// helperParent runs in a child copy of the test binary: it launches the fake
// backend, prints its pid, and waits to be killed, standing in for a host that
// dies.
func helperParent() {
	proc, err := plugins.Launch(context.Background(), plugins.LaunchConfig{
		Path:   os.Getenv(helperEnv),
		Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(proc.Pid())
	select {}
}

func launch(t *testing.T, env ...string) (*plugins.Process, sdk.Backend, *sdktest.SyncBuffer) {
	t.Helper()
	logs := &sdktest.SyncBuffer{}
	logger := hclog.New(&hclog.LoggerOptions{Name: "host", Output: logs, Level: hclog.Debug})
	proc, err := plugins.Launch(context.Background(), plugins.LaunchConfig{
		Path: fakeBackend, Env: env, Logger: logger, StartTimeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Kill)
	return proc, proc.Backend(), logs
}

// processGone reports whether pid has exited (a zombie counts: it no longer runs).
func processGone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after %v", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLaunchEndToEnd(t *testing.T) {
	proc, backend, logs := launch(t)
	ctx := context.Background()
	if proc.Pid() <= 0 || proc.Exited() {
		t.Fatalf("pid %d, exited %v", proc.Pid(), proc.Exited())
	}
	if v := proc.NegotiatedVersion(); v != sdk.ProtocolVersion {
		t.Errorf("negotiated version %d", v)
	}
	d, err := backend.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "fakebackend" || d.MaxInFlight != 2 || len(d.Curves) != 1 {
		t.Errorf("Describe = %+v", d)
	}
	key := sdk.KeyRef{ID: "k1", Path: "/keys/k1", Digest: [32]byte{1}}
	if _, err := backend.LoadKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := backend.LoadKey(ctx, sdk.KeyRef{ID: "k1", Path: "/keys/k1", Digest: [32]byte{2}}); sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Errorf("LoadKey with another digest: %v", err)
	}

	// The backend, another process, opens the host's sealed memfd through /proc.
	store := shm.NewStore()
	defer store.Close()
	W, A := testcircuit.RandomVector(t, 100), testcircuit.RandomVector(t, 64)
	h, err := store.Write("p0", sdk.CurveBLS12381, W, A, A)
	if err != nil {
		t.Fatal(err)
	}
	wantProof := sha256.Sum256(unsafe.Slice((*byte)(unsafe.Pointer(&W[0])), len(W)*32))

	res, err := backend.Prove(ctx, sdk.ProveRequest{KeyID: "k1", Partition: h})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Proof, wantProof[:]) {
		t.Errorf("proof %x, want %x", res.Proof, wantProof)
	}

	// Typed errors cross the process boundary, and the backend keeps serving.
	bad := h
	bad.Inode++
	short := h
	short.Size -= 4096
	for _, tc := range []struct {
		name string
		req  sdk.ProveRequest
		kind sdk.ErrorKind
	}{
		{"unknown key", sdk.ProveRequest{KeyID: "nope", Partition: h}, sdk.ErrKeyNotLoaded},
		{"another inode", sdk.ProveRequest{KeyID: "k1", Partition: bad}, sdk.ErrInvalidArgument},
		{"bad size", sdk.ProveRequest{KeyID: "k1", Partition: short}, sdk.ErrInvalidArgument},
	} {
		_, err := backend.Prove(ctx, tc.req)
		var e *sdk.Error
		if !errors.As(err, &e) || e.Kind != tc.kind || e.Retryable {
			t.Errorf("%s: got %v, want a non-retryable %v", tc.name, err, tc.kind)
		}
	}
	if _, err := backend.Prove(ctx, sdk.ProveRequest{KeyID: "k1", Partition: h}); err != nil {
		t.Errorf("Prove after the errors: %v", err)
	}
	if err := backend.UnloadKey(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if _, err := backend.Prove(ctx, sdk.ProveRequest{KeyID: "k1", Partition: h}); sdk.KindOf(err) != sdk.ErrKeyNotLoaded {
		t.Errorf("Prove after UnloadKey: %v", err)
	}

	// The backend's JSON log lines reach the host's logger with their level.
	if out := logs.String(); !strings.Contains(out, "[INFO]  host.fakebackend: proved: ") {
		t.Errorf("the backend's log line is not in the host's log:\n%s", out)
	}

	pid := proc.Pid()
	proc.Kill()
	if !proc.Exited() {
		t.Error("Exited() is false after Kill")
	}
	waitGone(t, pid, 5*time.Second)
}

func TestLaunchCancelReachesBackend(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "canceled")
	_, backend, _ := launch(t, "FAKEBACKEND_CANCEL_MARKER="+marker)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := backend.Prove(ctx, sdk.ProveRequest{KeyID: "block", Partition: sdk.PartitionHandle{}})
	if sdk.KindOf(err) != sdk.ErrCanceled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want kind canceled matching DeadlineExceeded", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("Prove returned %v after its deadline", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the backend's Prove context was never cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLaunchCrashIsPluginShutdown(t *testing.T) {
	proc, backend, _ := launch(t)
	_, err := backend.Prove(context.Background(), sdk.ProveRequest{KeyID: "crash"})
	if !errors.Is(err, sdk.ErrPluginShutdown) || !sdk.IsRetryable(err) {
		t.Fatalf("got %v, want a retryable error matching ErrPluginShutdown", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !proc.Exited() {
		if time.Now().After(deadline) {
			t.Fatal("Exited() stays false after the crash")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLaunchChecksum(t *testing.T) {
	data, err := os.ReadFile(fakeBackend)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	proc, err := plugins.Launch(context.Background(), plugins.LaunchConfig{
		Path: fakeBackend, SHA256: sum[:], Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		t.Fatalf("Launch with the right checksum: %v", err)
	}
	proc.Kill()
}

func TestLaunchErrors(t *testing.T) {
	dir := t.TempDir()
	noExec := filepath.Join(dir, "noexec")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notPlugin := filepath.Join(dir, "notplugin")
	if err := os.WriteFile(notPlugin, []byte("#!/bin/sh\necho hello\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A backend that cannot start says why on stderr (a missing library, a bad
	// flag): the error quotes it.
	failing := filepath.Join(dir, "failing")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'error while loading shared libraries: libcuda.so.1' >&2\nexit 127\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	wrong := sha256.Sum256([]byte("another binary"))
	tests := []struct {
		name string
		cfg  plugins.LaunchConfig
		want []string
	}{
		{"no path", plugins.LaunchConfig{}, []string{"no path"}},
		{"missing", plugins.LaunchConfig{Path: filepath.Join(dir, "missing")}, []string{filepath.Join(dir, "missing"), "no such file"}},
		{"directory", plugins.LaunchConfig{Path: dir}, []string{dir, "is a directory"}},
		{"not executable", plugins.LaunchConfig{Path: noExec}, []string{noExec, "not executable"}},
		{"checksum mismatch", plugins.LaunchConfig{Path: fakeBackend, SHA256: wrong[:]}, []string{fakeBackend, "checksum mismatch", fmt.Sprintf("%x", wrong)}},
		{"checksum length", plugins.LaunchConfig{Path: fakeBackend, SHA256: []byte{1, 2}}, []string{"2 bytes"}},
		{"not a plugin", plugins.LaunchConfig{Path: notPlugin, StartTimeout: 5 * time.Second}, []string{notPlugin}},
		{"says why on stderr", plugins.LaunchConfig{Path: failing, StartTimeout: 5 * time.Second}, []string{failing, "its stderr: error while loading shared libraries: libcuda.so.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = hclog.NewNullLogger()
			proc, err := plugins.Launch(context.Background(), tc.cfg)
			if err == nil {
				proc.Kill()
				t.Fatal("Launch succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := plugins.Launch(ctx, plugins.LaunchConfig{Path: fakeBackend}); !errors.Is(err, context.Canceled) {
		t.Errorf("Launch with a cancelled context: %v", err)
	}
}

func TestBinaryRunByHandRefuses(t *testing.T) {
	out, err := exec.Command(fakeBackend).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("running the backend by hand: %v, want exit status 1", err)
	}
	if !strings.Contains(string(out), "This binary is a plugin") {
		t.Errorf("output does not explain itself:\n%s", out)
	}
}

// TestWatchdog kills a stand-in host with SIGKILL and checks that its backend
// exits: through the kernel's parent-death signal, and, with SIGTERM ignored,
// through the watchdog's poll alone.
func TestWatchdog(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
	}{
		{"death signal", ""},
		{"poll", "FAKEBACKEND_IGNORE_SIGTERM=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			helper := exec.Command(os.Args[0], "-test.run=^$")
			helper.Env = append(os.Environ(), helperEnv+"="+fakeBackend)
			if tc.env != "" {
				helper.Env = append(helper.Env, tc.env)
			}
			stdout, err := helper.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			pid, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				helper.Process.Kill()
				helper.Wait()
				t.Fatalf("helper said %q (%v)", line, err)
			}
			if processGone(pid) {
				t.Fatalf("backend %d is not running", pid)
			}
			if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			helper.Wait()
			waitGone(t, pid, 5*time.Second)
		})
	}
}

// TestLaunchSynthesizerKind launches a binary as a synthesizer: the same
// checks name the kind, and a backend binary started as a synthesizer starts
// (both kinds share the handshake) but answers "unimplemented" for the
// synthesizer service, which the host reports.
func TestLaunchSynthesizerKind(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing")
	_, err := plugins.Launch(context.Background(), plugins.LaunchConfig{Kind: plugins.KindSynthesizer, Path: missing, Logger: hclog.NewNullLogger()})
	if err == nil || !strings.Contains(err.Error(), "synthesizer binary "+missing+": no such file") {
		t.Errorf("Launch of a missing synthesizer: %v", err)
	}
	proc, err := plugins.Launch(context.Background(), plugins.LaunchConfig{Kind: plugins.KindSynthesizer, Path: fakeBackend, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Kill()
	if proc.Kind() != plugins.KindSynthesizer || proc.Backend() != nil || proc.Synthesizer() == nil {
		t.Fatalf("process of kind %v with backend %v and synthesizer %v", proc.Kind(), proc.Backend(), proc.Synthesizer())
	}
	_, err = proc.Synthesizer().Describe(context.Background())
	if sdk.KindOf(err) != sdk.ErrUnimplemented {
		t.Errorf("Describe of a backend as a synthesizer: %v, want unimplemented", err)
	}
}

// TestKillStoppedPlugin stops a backend with SIGSTOP while a call is in flight:
// it never answers the shutdown request go-plugin's Kill sends first, so Kill
// must end it with SIGKILL and return, and the call in flight must end too.
func TestKillStoppedPlugin(t *testing.T) {
	proc, backend, logs := launch(t)
	pid := proc.Pid()
	// Registered after launch's cleanup, so it runs first: a Kill that fails
	// this test must not leave a stopped process behind.
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	callDone := make(chan error, 1)
	go func() {
		_, err := backend.Prove(context.Background(), sdk.ProveRequest{KeyID: "block"})
		callDone <- err
	}()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Until every thread is stopped it could still answer the shutdown
	// request (procfs.Stopped).
	deadline := time.Now().Add(30 * time.Second)
	for !procfs.Stopped("/proc", pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the backend (pid %d) is not stopped 30 s after SIGSTOP", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	killed := make(chan struct{})
	go func() {
		proc.Kill()
		close(killed)
	}()
	// Generous on a loaded machine; without the SIGKILL, Kill never returns.
	limit := plugins.KillGrace + time.Minute
	select {
	case <-killed:
	case <-time.After(limit):
		t.Fatalf("Kill of a stopped backend did not return within %s", limit)
	}
	waitGone(t, pid, 10*time.Second)
	if !proc.Exited() {
		t.Error("Exited() is false after Kill returned")
	}
	select {
	case err := <-callDone:
		if !errors.Is(err, sdk.ErrPluginShutdown) {
			t.Errorf("the call in flight ended with %v, want ErrPluginShutdown", err)
		}
	case <-time.After(time.Minute):
		t.Error("the call in flight on the stopped backend did not end after Kill")
	}
	if !strings.Contains(logs.String(), "sending SIGKILL") {
		t.Errorf("the log does not say the backend was sent SIGKILL:\n%s", logs.String())
	}
}

// TestLaunchCancelledDuringHandshake cancels Launch's context while the plugin
// has not answered the handshake (as a stopped one never does): Launch must
// kill it and return at once rather than wait out the start timeout.
func TestLaunchCancelledDuringHandshake(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	silent := filepath.Join(dir, "silent")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %s\nexec sleep 600\n", pidFile)
	if err := os.WriteFile(silent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		proc *plugins.Process
		err  error
	}
	launched := make(chan result, 1)
	go func() {
		proc, err := plugins.Launch(ctx, plugins.LaunchConfig{Path: silent, Logger: hclog.NewNullLogger(), StartTimeout: 10 * time.Minute})
		launched <- result{proc, err}
	}()
	var pid int
	deadline := time.Now().Add(time.Minute)
	for pid == 0 {
		if b, err := os.ReadFile(pidFile); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the plugin never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() {
		if !processGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	cancel()
	select {
	case r := <-launched:
		if r.err == nil {
			r.proc.Kill()
			t.Fatal("Launch succeeded with a plugin that never answered the handshake")
		}
		if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), silent) {
			t.Errorf("Launch: %v, want context.Canceled naming %s", r.err, silent)
		}
	case <-time.After(time.Minute):
		t.Fatal("Launch did not return within a minute of its context's end; it waits out the start timeout")
	}
	waitGone(t, pid, 10*time.Second)
}
