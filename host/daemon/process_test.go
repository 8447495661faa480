package daemon

// Tests that run `zkhost serve` as a real process: killed with SIGKILL and
// restarted, and started with no config at all.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/client"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/sdk/sdktest"
)

// serveProc is a `zkhost serve` process.
type serveProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	log    *sdktest.SyncBuffer
	waited chan error
}

// processConfig writes the config of a host with the small and big circuits
// into a fresh state directory, for `zkhost serve --config`, and returns its
// path and the socket the host's API listens on. It skips t under -short: a
// test that runs the host as a process is not short.
func processConfig(t *testing.T) (cfgPath, socket string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs zkhost serve as a process (-short)")
	}
	stateDir := apitest.ShortTempDir(t)
	cfgPath = filepath.Join(stateDir, "zkhost.toml")
	if err := os.WriteFile(cfgPath, []byte(configText(stateDir, opts{circuits: []string{small, big}})), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, filepath.Join(stateDir, "zk.sock")
}

// startServe starts `zkhost serve ARGS...` with env added to this process's
// environment, and waits until it answers on socket.
func startServe(t *testing.T, socket string, env []string, args ...string) (*serveProc, *client.Client) {
	t.Helper()
	p := &serveProc{t: t, log: &sdktest.SyncBuffer{}, waited: make(chan error, 1)}
	p.cmd = exec.Command(zkhostBin, append([]string{"serve"}, args...)...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.waited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.end()
		if t.Failed() {
			t.Logf("zkhost serve (pid %d) output:\n%s", p.cmd.Process.Pid, p.log.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := client.Dial(socket, client.Options{ProbeTimeout: time.Second})
		if err == nil {
			return p, c
		}
		select {
		case err := <-p.waited:
			p.waited <- err
			t.Fatalf("zkhost serve exited before serving: %v\n%s", err, p.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("zkhost serve did not answer on %s within 30s: %v\n%s", socket, err, p.log.String())
		}
	}
}

// kill ends the process with SIGKILL (if it still runs) and reaps it.
func (p *serveProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	err := <-p.waited
	p.waited <- err
}

// end stops the process if it still runs: SIGTERM, so it removes its socket and
// shared-memory directory, then SIGKILL after 10s.
func (p *serveProc) end() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.waited:
		p.waited <- err
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

// stop ends the process with SIGTERM and returns its exit error.
func (p *serveProc) stop(within time.Duration) error {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.waited:
		p.waited <- err
		return err
	case <-time.After(within):
		p.t.Fatalf("zkhost serve did not exit within %s of SIGTERM", within)
		return nil
	}
}

// backendChildren returns the pids of the zkhost-backend-cpu processes whose parent
// is pid.
func backendChildren(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procStat(child)
		if !ok || ppid != pid || state == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), config.DefaultBackendName) {
			out = append(out, child)
		}
	}
	return out
}

// procStat reads a process's parent pid and state from /proc/PID/stat.
func procStat(pid int) (ppid int, state string, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0], err == nil
}

// running reports whether pid is a live (not zombie) process running cmd.
func running(pid int, cmd string) bool {
	_, state, ok := procStat(pid)
	if !ok || state == "Z" {
		return false
	}
	cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.Contains(string(cmdline), cmd)
}

// TestKillAndRestart runs `zkhost serve --config`, submits two jobs, kills the host
// with SIGKILL while the first job's second partition computes, and starts it again on
// the same state directory: both jobs complete with valid proofs, the restarted host
// proves only the partitions that had no proof, the killed host's backend does not
// outlive it, and no partition file is left.
func TestKillAndRestart(t *testing.T) {
	cfgPath, socket := processConfig(t)
	ctx := testCtx(t, 3*time.Minute)

	first, c := startServe(t, socket, nil, "--config", cfgPath)
	bigWs := witnesses(t, big, 3, 7)
	smallWs := witnesses(t, small, 3, 8)
	reqA := api.SubmitRequest{Circuit: big, Witnesses: bigWs, Class: api.ClassNormal, RequestID: "restart-a"}
	jobA, err := c.Submit(ctx, reqA)
	if err != nil {
		t.Fatal(err)
	}
	jobB, err := c.Submit(ctx, api.SubmitRequest{Circuit: small, Witnesses: smallWs, Class: api.ClassLow})
	if err != nil {
		t.Fatal(err)
	}

	// Kill the host while partition 1 of job A computes. The kill is timed from
	// partition 1's dispatch, which follows partition 0's proof at once, and not
	// from partition 0's verification, which waits for a journal write: on a disk
	// with slow syncs that can outlast partition 1's whole proof.
	var (
		mu        sync.Mutex
		verified0 bool // partition 0's proof is in the journal: the event follows the write
	)
	proving1 := make(chan struct{})
	go func() {
		var once sync.Once
		c.Await(ctx, jobA.ID, func(e api.JobEvent) error {
			if reached(e, 0, api.PartitionVerified) {
				mu.Lock()
				verified0 = true
				mu.Unlock()
			}
			if reached(e, 1, api.PartitionProving) {
				once.Do(func() { close(proving1) })
			}
			return nil
		})
	}()
	select {
	case <-proving1:
	case <-time.After(time.Minute):
		t.Fatal("job A's partition 1 never reached the device")
	}
	ja, err := c.Get(ctx, jobA.ID)
	if err != nil {
		t.Fatal(err)
	}
	p0, p1 := ja.Partitions[0], ja.Partitions[1]
	proveTime := p0.ProveEnd.Sub(p0.ProveStart)
	time.Sleep(time.Until(p1.ProveStart.Add(proveTime / 5)))
	mu.Lock()
	p0Recorded := verified0
	mu.Unlock()
	pid := first.cmd.Process.Pid
	backends := backendChildren(t, pid)
	if len(backends) != 1 {
		t.Fatalf("host pid %d has backend children %v, want one", pid, backends)
	}
	c.Close()
	first.kill()
	killedAt := time.Now()

	// The backend's parent-death watchdog ends it.
	for _, b := range backends {
		deadline := time.Now().Add(10 * time.Second)
		for running(b, config.DefaultBackendName) {
			if time.Now().After(deadline) {
				t.Fatalf("backend pid %d still runs 10s after its host (pid %d) was killed", b, pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("backend pid %d gone %s after its host was killed", b, time.Since(killedAt))
	}

	second, c2 := startServe(t, socket, nil, "--config", cfgPath)
	defer c2.Close()
	finalA, err := c2.Await(ctx, jobA.ID, nil)
	if err != nil {
		t.Fatalf("await A after restart: %v", err)
	}
	finalB, err := c2.Await(ctx, jobB.ID, nil)
	if err != nil {
		t.Fatalf("await B after restart: %v", err)
	}
	verifyProofs(t, big, finalA, bigWs)
	verifyProofs(t, small, finalB, smallWs)
	switch {
	case p0Recorded && !finalA.Partitions[0].ProveStart.IsZero():
		t.Errorf("the restarted host proved job A's partition 0 again, which had its proof before the kill")
	case !p0Recorded:
		t.Logf("partition 0's proof was not yet in the journal when the host was killed; whether it is proved again is not checked")
	}
	for _, i := range []int{1, 2} {
		if finalA.Partitions[i].ProveStart.IsZero() {
			t.Errorf("job A's partition %d: no prove start in the restarted host", i)
		}
	}
	// The request id survived the restart: the same submission is the same job.
	again, err := c2.Submit(ctx, reqA)
	if err != nil || again.ID != jobA.ID {
		t.Errorf("resubmitting request %q after the restart: job %s, %v; want job %s", reqA.RequestID, again.ID, err, jobA.ID)
	}
	if files := partitionFiles(t, second.cmd.Process.Pid); len(files) != 0 {
		t.Errorf("partition files left after both jobs finished: %v", files)
	}

	pid2 := second.cmd.Process.Pid
	backends2 := backendChildren(t, pid2)
	if err := second.stop(20 * time.Second); err != nil {
		t.Errorf("zkhost serve exited with %v after SIGTERM", err)
	}
	for _, b := range backends2 {
		apitest.WaitFor(t, 5*time.Second, "the backend to exit with its host", func() bool { return !running(b, config.DefaultBackendName) })
	}
}

// TestServeDefaults runs `zkhost serve` with no config: one CPU backend from the
// directory of the executable, the socket in the state directory, a budget of 80% of
// RAM, and the key sets found in <state_dir>/keys served by name.
func TestServeDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the host as a process (-short)")
	}
	home := apitest.ShortTempDir(t)
	stateDir := filepath.Join(home, "state", "zkhost")
	// Keys where the default config looks for them.
	keys := filepath.Join(stateDir, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".ccs", ".vk", ".pk", ".json"} {
		data, err := os.ReadFile(filepath.Join(keysDir, small+ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(keys, small+ext), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	socket := filepath.Join(stateDir, "zkhost.sock")
	env := []string{"XDG_STATE_HOME=" + filepath.Join(home, "state"), "HOME=" + home}
	p, c := startServe(t, socket, env)
	defer c.Close()
	ctx := testCtx(t, time.Minute)

	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Devices) != 1 {
		t.Fatalf("%d devices, want the one default CPU backend", len(st.Devices))
	}
	dev := st.Devices[0]
	if want := filepath.Join(binDir, config.DefaultBackendName); dev.Backend != want || dev.Kind != "cpu" || !dev.Healthy {
		t.Errorf("default device: backend %q kind %q healthy %v; want %q, cpu, healthy", dev.Backend, dev.Kind, dev.Healthy, want)
	}
	def, err := config.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	if def.Budget.BytesSetting.Percent != 80 || st.Budget.TotalBytes != def.Budget.Bytes {
		t.Errorf("budget total %d bytes; the default is %s = %d bytes", st.Budget.TotalBytes, def.Budget.BytesSetting, def.Budget.Bytes)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "journal.db")); err != nil {
		t.Errorf("journal not in the state directory: %v", err)
	}

	// The discovered key set serves under its key name and its circuit's name.
	for _, name := range []string{small, "chain"} {
		ws := witnesses(t, small, 2, 3)
		job, err := c.Submit(ctx, api.SubmitRequest{Circuit: name, Witnesses: ws})
		if err != nil {
			t.Fatalf("submit to %q: %v", name, err)
		}
		final, err := c.Await(ctx, job.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		verifyProofs(t, small, final, ws)
	}
	if err := p.stop(20 * time.Second); err != nil {
		t.Errorf("zkhost serve exited with %v after SIGTERM", err)
	}
	if _, err := os.Stat(socket); err == nil {
		t.Errorf("socket %s left after the daemon stopped", socket)
	}
}
