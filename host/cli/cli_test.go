package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// daemon serves a fake daemon on a temporary socket; the tests pass it with --api.
type daemon struct {
	fake *apitest.Fake
	sock string
}

func newDaemon(t *testing.T) *daemon {
	t.Helper()
	fake := apitest.NewFake("gpu0", "gpu1")
	fake.Circuits = map[string]bool{"merkle": true}
	srv := apitest.Serve(t, fake, api.Config{})
	return &daemon{fake: fake, sock: srv.SocketPath()}
}

// onWatched has the fake daemon run f on each job submitted, once a client
// watches the job (so that it sees every event f makes).
func (d *daemon) onWatched(ctx context.Context, f func(id string)) {
	d.fake.OnSubmit = func(id string) {
		if d.fake.WaitSubscribers(ctx, id, 1) != nil {
			return
		}
		f(id)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// run runs a command and returns its stdout and stderr.
func run(ctx context.Context, cmd func(context.Context, []string, *bytes.Buffer, *bytes.Buffer) error, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := cmd(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// daemonCommands are the commands of this package, as cmd/zkhost registers them.
var daemonCommands = NewRegistry(nil, Submit, Wait, Status, Jobs, Job, Cancel, Preload, Evict, Enable)

// cmd looks a command up in daemonCommands, so the registry itself is tested.
func cmd(name string) func(context.Context, []string, *bytes.Buffer, *bytes.Buffer) error {
	c, _, _, ok := daemonCommands.Find([]string{name})
	if !ok {
		panic("no command " + name)
	}
	return func(ctx context.Context, args []string, o, e *bytes.Buffer) error {
		return c.Run(ctx, Invocation{Command: c, Args: args, Stdout: o, Stderr: e})
	}
}

// writeWitnesses writes n witness files with distinct contents and returns their paths.
func writeWitnesses(t *testing.T, n int) ([]string, [][]byte) {
	dir := t.TempDir()
	var paths []string
	var contents [][]byte
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("w%d.bin", i))
		c := []byte(fmt.Sprintf("witness-%d-%s", i, strings.Repeat("x", i)))
		if err := os.WriteFile(p, c, 0o600); err != nil {
			t.Fatal(err)
		}
		paths, contents = append(paths, p), append(contents, c)
	}
	return paths, contents
}

// checkOutputs checks that dir holds exactly the fake daemon's proof and public witness
// of each partition, under <i>.proof and <i>.public.
func checkOutputs(t *testing.T, dir string, witnesses [][]byte) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2*len(witnesses) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("output dir holds %v, want %d files", names, 2*len(witnesses))
	}
	for i, w := range witnesses {
		proof, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.proof", i)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(w)
		if !bytes.Equal(proof, append([]byte("proof:"), sum[:]...)) {
			t.Errorf("%d.proof holds another partition's bytes", i)
		}
		pub, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.public", i)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pub, append([]byte("public:"), w[:8]...)) {
			t.Errorf("%d.public = %q", i, pub)
		}
	}
}

func TestSubmitPrintsJobID(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	files, contents := writeWitnesses(t, 3)
	// Flags after the witness files work too.
	args := append([]string{"--api", d.sock, "--circuit", "merkle"}, files...)
	args = append(args, "--priority", "critical", "--request-id", "r-7")
	stdout, stderr, err := run(ctx, cmd("submit"), args...)
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	if stdout != "job-1\n" {
		t.Fatalf("stdout = %q, want the job id alone", stdout)
	}
	job, err := d.fake.Get(ctx, "job-1")
	if err != nil {
		t.Fatal(err)
	}
	if job.Class != api.ClassCritical || job.RequestID != "r-7" || len(job.Partitions) != 3 {
		t.Errorf("job = %+v", job)
	}
	// Witnesses arrive in the order given: the fake's public witness starts with each.
	if err := d.fake.Finish("job-1", "gpu0"); err != nil {
		t.Fatal(err)
	}
	job, _ = d.fake.Get(ctx, "job-1")
	for i, p := range job.Partitions {
		if !bytes.HasSuffix(p.PublicWitness, contents[i][:8]) {
			t.Errorf("partition %d got witness %q", i, p.PublicWitness)
		}
	}
	// The same request id with the same files is the same job.
	stdout, _, err = run(ctx, cmd("submit"), args...)
	if err != nil || stdout != "job-1\n" {
		t.Errorf("resubmit = %q, %v", stdout, err)
	}
	// With other files, a clear conflict.
	_, _, err = run(ctx, cmd("submit"), "--api", d.sock, "--circuit", "merkle", "--request-id", "r-7", files[0])
	if !errors.Is(err, api.ErrConflict) || !strings.Contains(err.Error(), `request id "r-7"`) {
		t.Errorf("reused request id = %v", err)
	}
}

// TestSubmitAssignments: with --assignment the files travel as wire assignments.
func TestSubmitAssignments(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	files, contents := writeWitnesses(t, 2)
	stdout, stderr, err := run(ctx, cmd("submit"), append([]string{"--api", d.sock, "--circuit", "merkle", "--assignment"}, files...)...)
	if err != nil {
		t.Fatalf("submit --assignment: %v\n%s", err, stderr)
	}
	req, ok := d.fake.Request(strings.TrimSpace(stdout))
	if !ok || len(req.Witnesses) != 0 || len(req.Assignments) != 2 || !bytes.Equal(req.Assignments[1], contents[1]) {
		t.Errorf("request %+v, want the two files as assignments", req)
	}
}

func TestSubmitWaitWritesProofs(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	d.onWatched(ctx, func(id string) {
		d.fake.Advance(id, 1, api.EventPartitionSynthesizing, "", "")
		d.fake.Advance(id, 1, api.EventPartitionProving, "gpu1", "")
		d.fake.Advance(id, 1, api.EventPartitionRetried, "gpu1", "backend exited: signal: killed")
		d.fake.Finish(id, "gpu0")
	})
	files, contents := writeWitnesses(t, 2)
	out := filepath.Join(t.TempDir(), "proofs")
	stdout, stderr, err := run(ctx, cmd("submit"), append([]string{"--api", d.sock, "--circuit", "merkle", "--wait", "--out", out}, files...)...)
	if err != nil {
		t.Fatalf("submit --wait: %v\n%s", err, stderr)
	}
	if stdout != "job-1\n" {
		t.Errorf("stdout = %q", stdout)
	}
	for _, want := range []string{
		"job job-1: 2 partitions of merkle, class normal",
		"partition 1 attempt 1 on gpu1 failed, retrying: backend exited: signal: killed",
		"[1/2] partition 0 verified on gpu0 (staged ", // Finish runs the partitions in index order
		"[2/2] partition 1 verified on gpu0 (staged ",
		"attempt 2)",
		"job job-1 done in ",
		"wrote 4 files to " + out,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	checkOutputs(t, out, contents)
}

func TestSubmitWaitFailedJob(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	d.onWatched(ctx, func(id string) {
		d.fake.Advance(id, 0, api.EventPartitionFailed, "gpu0", "constraint #3 not satisfied")
		d.fake.Fail(id, "partition 0: constraint #3 not satisfied")
	})
	files, _ := writeWitnesses(t, 1)
	out := filepath.Join(t.TempDir(), "proofs")
	_, stderr, err := run(ctx, cmd("submit"), "--api", d.sock, "--circuit", "merkle", "--out", out, files[0])
	if err == nil || err.Error() != "job job-1 failed: partition 0: constraint #3 not satisfied" {
		t.Fatalf("submit of a failing job = %v", err)
	}
	if !strings.Contains(stderr, "partition 0 failed: constraint #3 not satisfied") || !strings.Contains(stderr, "job job-1: 1 partition of merkle") ||
		!strings.Contains(stderr, "0/1 partition verified") {
		t.Errorf("stderr lacks the failure:\n%s", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed job created the output dir: %v", err)
	}
}

func TestWait(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	files, contents := writeWitnesses(t, 3)
	if _, _, err := run(ctx, cmd("submit"), append([]string{"--api", d.sock, "--circuit", "merkle"}, files...)...); err != nil {
		t.Fatal(err)
	}
	if err := d.fake.Finish("job-1", "gpu1"); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, stderr, err := run(ctx, cmd("wait"), "--api", d.sock, "job-1", "--out", out)
	if err != nil {
		t.Fatalf("wait: %v\n%s", err, stderr)
	}
	checkOutputs(t, out, contents)
	// A job that had ended is reported once, not by its snapshot and its end.
	if strings.Count(stderr, "job job-1 done") != 1 || !strings.Contains(stderr, "3/3 partitions verified") {
		t.Errorf("stderr = %s", stderr)
	}

	if _, _, err := run(ctx, cmd("wait"), "--api", d.sock, "job-9"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("wait on unknown job = %v", err)
	}

	// Interrupted: the job goes on, and the message says how to follow it again.
	if _, _, err := run(ctx, cmd("submit"), "--api", d.sock, "--circuit", "merkle", files[0]); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		d.fake.WaitSubscribers(ctx, "job-2", 1)
		cancel()
	}()
	_, _, err = run(wctx, cmd("wait"), "--api", d.sock, "job-2")
	if err == nil || !strings.Contains(err.Error(), "stopped waiting; job job-2 goes on in the daemon (`zkhost wait job-2 --api "+d.sock+"` to follow it again)") {
		t.Errorf("interrupted wait = %v", err)
	}

	// Cancelled while waiting.
	go func() {
		d.fake.WaitSubscribers(ctx, "job-2", 1)
		d.fake.Cancel(ctx, "job-2")
	}()
	if _, _, err := run(ctx, cmd("wait"), "--api", d.sock, "job-2"); err == nil || err.Error() != "job job-2 was cancelled" {
		t.Errorf("wait on a cancelled job = %v", err)
	}
}

func TestStatus(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	d.fake.Report.Version = "v0.3.0"
	d.fake.Report.Uptime = 75 * time.Minute
	d.fake.Report.SynthesisRunning, d.fake.Report.SynthesisCapacity = 3, 8
	d.fake.Report.Budget = api.BudgetStatus{UsedBytes: 6 << 30, TotalBytes: 24 << 30, CriticalReserveBytes: 4 << 30}
	d.fake.Report.Devices[0].Model = "NVIDIA H100 80GB HBM3"
	d.fake.Report.Devices[0].BusyPercent = 93.6
	d.fake.Report.Devices[0].UtilizationPercent, d.fake.Report.Devices[0].UtilizationSource = 97.2, "nvml"
	d.fake.Report.Devices[1].Healthy = false
	d.fake.Report.Devices[1].Error = "restarting after exit status 134"
	d.fake.Report.Devices[1].Restarts = 2
	files, _ := writeWitnesses(t, 2)
	if _, _, err := run(ctx, cmd("submit"), append([]string{"--api", d.sock, "--circuit", "merkle", "--priority", "low"}, files...)...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(ctx, cmd("preload"), "--api", d.sock, "merkle", "--device", "gpu0"); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := run(ctx, cmd("status"), "--api", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"zkhost v0.3.0 at " + d.sock + ", up 1h15m; synthesis 3/8 running",
		"Queued work", "Devices", "Memory budget",
		"NVIDIA H100 80GB HBM3", "94%", "97% nvml", "merkle",
		"DOWN: restarting after exit status 134",
		"6.0 GiB", "24.0 GiB", "25%", "4.0 GiB",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, stdout)
		}
	}
	// The low class row shows the job's two queued partitions.
	if !lineWith(stdout, "low", "1", "2") {
		t.Errorf("no queue row for low with 1 job, 2 partitions:\n%s", stdout)
	}

	stdout, _, err = run(ctx, cmd("status"), "--api", d.sock, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep api.StatusReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Budget.TotalBytes != 24<<30 || rep.Devices[1].Restarts != 2 {
		t.Errorf("status --json = %+v, %v", rep, err)
	}
}

// lineWith reports whether some line of s holds all the fields, in order.
func lineWith(s string, fields ...string) bool {
	for _, line := range strings.Split(s, "\n") {
		rest, ok := line, true
		for _, f := range fields {
			i := strings.Index(rest, " "+f+" ")
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(f)+1:]
		}
		if ok {
			return true
		}
	}
	return false
}

func TestJobsJobCancel(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	files, _ := writeWitnesses(t, 2)
	for i := 0; i < 3; i++ {
		if _, _, err := run(ctx, cmd("submit"), append([]string{"--api", d.sock, "--circuit", "merkle"}, files...)...); err != nil {
			t.Fatal(err)
		}
	}
	d.fake.Finish("job-1", "gpu0")
	d.fake.Advance("job-2", 0, api.EventPartitionProving, "gpu1", "")
	d.fake.Advance("job-2", 0, api.EventPartitionRetried, "gpu1", "device lost")

	stdout, _, err := run(ctx, cmd("jobs"), "--api", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	if !lineWith(stdout, "job-1", "normal", "merkle", "done", "2/2") || !lineWith(stdout, "job-2", "running", "0/2") ||
		!lineWith(stdout, "job-3", "queued", "0/2") {
		t.Errorf("jobs table:\n%s", stdout)
	}
	if strings.Index(stdout, "job-3") > strings.Index(stdout, "job-1") {
		t.Errorf("jobs not newest first:\n%s", stdout)
	}
	stdout, _, err = run(ctx, cmd("jobs"), "--api", d.sock, "--state", "done", "--json")
	var jobs []api.Job
	if err != nil || json.Unmarshal([]byte(stdout), &jobs) != nil || len(jobs) != 1 || jobs[0].ID != "job-1" {
		t.Errorf("jobs --state done --json = %s, %v", stdout, err)
	}
	if _, _, err := run(ctx, cmd("jobs"), "--api", d.sock, "--state", "finished"); !errors.Is(err, ErrUsage) {
		t.Errorf("jobs --state finished = %v", err)
	}

	stdout, _, err = run(ctx, cmd("job"), "--api", d.sock, "job-2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "job job-2: running, circuit merkle, class normal, 0/2 partitions verified") ||
		!lineWith(stdout, "0", "queued", "1", "gpu1") || !strings.Contains(stdout, "device lost") {
		t.Errorf("job output:\n%s", stdout)
	}

	stdout, _, err = run(ctx, cmd("cancel"), "--api", d.sock, "job-2", "job-1")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "job job-2 cancelled\njob job-1 had already ended: done\n" {
		t.Errorf("cancel output = %q", stdout)
	}
	// Cancelled before: said to have ended, as a done job is.
	stdout, _, err = run(ctx, cmd("cancel"), "--api", d.sock, "job-2")
	if err != nil || stdout != "job job-2 had already ended: cancelled\n" {
		t.Errorf("second cancel = %q, %v", stdout, err)
	}
	_, _, err = run(ctx, cmd("cancel"), "--api", d.sock, "job-3", "job-404")
	if !errors.Is(err, api.ErrNotFound) || err.Error() != `job-404: no job "job-404"` {
		t.Errorf("cancel of an unknown job = %v", err)
	}
	// No doubled prefix: main prefixes "zkhost job: " to the daemon's own message.
	if _, _, err := run(ctx, cmd("job"), "--api", d.sock, "job-404"); err == nil || err.Error() != `no job "job-404"` {
		t.Errorf("job of an unknown job = %v", err)
	}
	if j, _ := d.fake.Get(ctx, "job-3"); j.State != api.JobCancelled {
		t.Error("a bad id stopped the other cancellations")
	}
}

func TestPreloadEvict(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	stdout, _, err := run(ctx, cmd("preload"), "--api", d.sock, "merkle")
	if err != nil || stdout != "proving key of merkle loaded on gpu0, gpu1\n" {
		t.Errorf("preload = %q, %v", stdout, err)
	}
	stdout, _, err = run(ctx, cmd("evict"), "--api", d.sock, "--device", "gpu1", "merkle")
	if err != nil || stdout != "proving key of merkle evicted from gpu1\n" {
		t.Errorf("evict = %q, %v", stdout, err)
	}
	st, _ := d.fake.Status(ctx)
	if len(st.Devices[0].KeysResident) != 1 || len(st.Devices[1].KeysResident) != 0 {
		t.Errorf("keys after preload+evict: %+v", st.Devices)
	}
	if _, _, err := run(ctx, cmd("preload"), "--api", d.sock, "sha256"); !errors.Is(err, api.ErrInvalidArgument) {
		t.Errorf("preload of an unknown circuit = %v", err)
	}
}

func TestEnable(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	stdout, _, err := run(ctx, cmd("enable"), "--api", d.sock, "gpu1")
	if err != nil || !strings.HasPrefix(stdout, "device gpu1 enabled") || !strings.Contains(stdout, "healthy") {
		t.Errorf("enable = %q, %v", stdout, err)
	}
	if _, _, err := run(ctx, cmd("enable"), "--api", d.sock, "gpu9"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("enable of an unknown device = %v", err)
	}
	if _, _, err := run(ctx, cmd("enable"), "--api", d.sock); !errors.Is(err, ErrUsage) {
		t.Errorf("enable without a device = %v", err)
	}
}

func TestUsage(t *testing.T) {
	ctx := testCtx(t)
	files, _ := writeWitnesses(t, 1)
	tests := []struct {
		cmd  string
		args []string
		want string
	}{
		{"submit", []string{files[0]}, "--circuit is required"},
		{"submit", []string{"--circuit", "merkle"}, "no WITNESS file"},
		{"submit", []string{"--circuit", "merkle", "--priority", "urgent", files[0]}, "unknown priority class"},
		{"submit", []string{"--bogus"}, "flag provided but not defined: -bogus"},
		{"wait", nil, "want exactly one JOB"},
		{"job", []string{"a", "b"}, "want exactly one JOB"},
		{"cancel", nil, "no JOB given"},
		{"preload", nil, "want exactly one CIRCUIT"},
		{"jobs", []string{"--limit", "0"}, "--limit 0"},
		{"status", []string{"extra"}, `unexpected argument "extra"`},
		{"status", []string{"--api", "/x.sock", "--config", "/y.toml"}, "use --api or --config, not both"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+" "+tt.want, func(t *testing.T) {
			stdout, stderr, err := run(ctx, cmd(tt.cmd), tt.args...)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrUsage with %q", err, tt.want)
			}
			// The caller prints the message first, then the synopsis (cmd/zkhost's
			// report): the command itself prints nothing, no page of flags above it.
			if stdout != "" || stderr != "" {
				t.Errorf("a usage error printed stdout %q, stderr %q", stdout, stderr)
			}
		})
	}
	// Help that was asked for is the command's output: stdout, no error.
	for _, c := range daemonCommands.Commands() {
		stdout, stderr, err := run(ctx, cmd(c.Name), "--help")
		if err != nil || !strings.HasPrefix(stdout, "Usage: zkhost "+c.Usage+"\n") || !strings.Contains(stdout, "-api") || stderr != "" {
			t.Errorf("%s --help = %v\nstdout:\n%s\nstderr:\n%s", c.Name, err, stdout, stderr)
		}
		if strings.Contains(stdout, `"s `) {
			t.Errorf("%s --help has a stray quote:\n%s", c.Name, stdout)
		}
	}
	// A missing witness file is named.
	if _, _, err := run(ctx, cmd("submit"), "--circuit", "merkle", "/no/such/witness.bin"); err == nil ||
		!strings.Contains(err.Error(), "/no/such/witness.bin") {
		t.Errorf("missing witness = %v", err)
	}
}

func TestFindDaemon(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)

	// --config: the [api] socket of a config file.
	cfg := filepath.Join(t.TempDir(), "zkhost.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[api]\nsocket = %q\n", d.sock)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(ctx, cmd("status"), "--config", cfg); err != nil {
		t.Errorf("status --config: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[api]\nsockett = \"/x\"\n"), 0o600)
	if _, _, err := run(ctx, cmd("status"), "--config", bad); err == nil || !strings.Contains(err.Error(), "sockett") {
		t.Errorf("status with a bad config = %v, want the key named", err)
	}

	// The default socket, under XDG_STATE_HOME.
	state := apitest.ShortTempDir(t)
	t.Setenv("XDG_STATE_HOME", state)
	if err := os.MkdirAll(filepath.Join(state, "zkhost"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvConfig, "")
	t.Setenv(EnvAPI, "")
	saved := systemSocket
	t.Cleanup(func() { systemSocket = saved })
	systemSocket = filepath.Join(state, "no-system-service.sock") // whatever this machine runs
	_, _, err := run(ctx, cmd("jobs"))
	want := "no zkhost daemon at " + filepath.Join(state, "zkhost", "zkhost.sock") + ": no such socket — is `zkhost serve` running?\n" +
		"(the default socket; for a daemon started with --config FILE, give the same --config FILE or export ZKHOST_CONFIG=FILE; for another address, --api ADDR or ZKHOST_API=ADDR)"
	if err == nil || err.Error() != want || !errors.Is(err, api.ErrUnavailable) {
		t.Errorf("jobs without a daemon = %v\nwant %s", err, want)
	}

	// $ZKHOST_CONFIG: the daemon its config names, as `zkhost serve` (which reads
	// the same variable) was started with; a flag still wins.
	t.Setenv(EnvConfig, cfg)
	if stdout, _, err := run(ctx, cmd("jobs")); err != nil || stdout != "no jobs\n" {
		t.Errorf("jobs with $ZKHOST_CONFIG = %q, %v", stdout, err)
	}
	if _, _, err := run(ctx, cmd("jobs"), "--api", filepath.Join(state, "none.sock")); err == nil ||
		!strings.Contains(err.Error(), "none.sock") || !strings.Contains(err.Error(), "(the address from --api)") {
		t.Errorf("--api beside $ZKHOST_CONFIG = %v, want the flag's address", err)
	}
	t.Setenv(EnvConfig, bad)
	if _, _, err := run(ctx, cmd("jobs")); err == nil || !strings.Contains(err.Error(), "$ZKHOST_CONFIG") || !strings.Contains(err.Error(), "sockett") {
		t.Errorf("jobs with a bad $ZKHOST_CONFIG = %v, want the variable and the key named", err)
	}
	t.Setenv(EnvConfig, "")
	// $ZKHOST_API: an address.
	t.Setenv(EnvAPI, d.sock)
	if stdout, _, err := run(ctx, cmd("jobs")); err != nil || stdout != "no jobs\n" {
		t.Errorf("jobs with $ZKHOST_API = %q, %v", stdout, err)
	}
	t.Setenv(EnvAPI, "")
	// The system service's socket, when the user's own does not exist.
	systemSocket = d.sock
	if stdout, _, err := run(ctx, cmd("jobs")); err != nil || stdout != "no jobs\n" {
		t.Errorf("jobs with only the system service's socket = %q, %v", stdout, err)
	}
	if err := os.Symlink(d.sock, filepath.Join(state, "zkhost", "zkhost.sock")); err != nil {
		t.Fatal(err)
	}
	if stdout, _, err := run(ctx, cmd("jobs")); err != nil || stdout != "no jobs\n" {
		t.Errorf("jobs on the default socket = %q, %v", stdout, err)
	}
}

func TestWriteOutputsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	job := api.Job{ID: "j", Partitions: []api.Partition{
		{Index: 0, Proof: []byte("p0"), PublicWitness: []byte("w0")},
		{Index: 1, Proof: nil, PublicWitness: []byte("w1")},
	}}
	if _, err := writeOutputs(dir, job, false); err == nil || !strings.Contains(err.Error(), "partition 1 of job j") {
		t.Fatalf("writeOutputs = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed write left %d files", len(entries))
	}
	// Existing files are replaced whole.
	os.WriteFile(filepath.Join(dir, "0.proof"), []byte("old and longer"), 0o644)
	job.Partitions = job.Partitions[:1]
	if _, err := writeOutputs(dir, job, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "0.proof")); string(b) != "p0" {
		t.Errorf("0.proof = %q", b)
	}
	// snarkjs's files are decoded from the proof: one that does not decode fails
	// the whole write.
	dir = t.TempDir()
	if _, err := writeOutputs(dir, job, true); err == nil || !strings.Contains(err.Error(), "snarkjs's files of partition 0") {
		t.Fatalf("writeOutputs with snarkjs's files of a bad proof = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed write left %d files", len(entries))
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-1: "-", 850 * time.Millisecond: "850ms", 12300 * time.Millisecond: "12.3s",
		4*time.Minute + 5*time.Second: "4m05s", 2*time.Hour + 10*time.Minute: "2h10m",
	} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestCheckOutDir(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	stale := filepath.Join(base, "stale")
	os.Mkdir(stale, 0o755)
	os.WriteFile(filepath.Join(stale, "9.proof"), []byte("x"), 0o644)
	summary := filepath.Join(base, "summary")
	os.Mkdir(summary, 0o755)
	os.WriteFile(filepath.Join(summary, "summary.json"), []byte("{}"), 0o644)
	unrelated := filepath.Join(base, "unrelated")
	os.Mkdir(unrelated, 0o755)
	os.WriteFile(filepath.Join(unrelated, "notes.txt"), []byte("x"), 0o644)
	readOnly := filepath.Join(base, "ro")
	os.Mkdir(readOnly, 0o555)
	for _, tc := range []struct {
		dir, want string // want "" for no error
	}{
		{base, ""},
		{unrelated, ""},
		{filepath.Join(base, "new", "deeper"), ""},
		{file, "output directory " + file + " is not a directory"},
		{filepath.Join(file, "sub"), "not a directory"},
		{stale, "output directory " + stale + " already holds proofs (9.proof); choose another or empty it"},
		{summary, "already holds proofs (summary.json)"},
		{filepath.Join(readOnly, "out"), "cannot be created in " + readOnly},
	} {
		if tc.dir == filepath.Join(readOnly, "out") && os.Getuid() == 0 {
			continue // root writes anywhere
		}
		err := CheckOutDir(tc.dir)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckOutDir(%s) = %v, want %q", tc.dir, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "new")); !os.IsNotExist(err) {
		t.Errorf("CheckOutDir created a directory: %v", err)
	}
	if entries, _ := os.ReadDir(unrelated); len(entries) != 1 {
		t.Errorf("CheckOutDir left files: %v", entries)
	}
}

// A bad or stale --out is refused before the job is submitted (or awaited).
func TestOutDirCheckedFirst(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	files, _ := writeWitnesses(t, 1)
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, []byte("x"), 0o644)
	stale := t.TempDir()
	os.WriteFile(filepath.Join(stale, "0.public"), []byte("x"), 0o644)
	for _, out := range []string{notDir, stale} {
		_, _, err := run(ctx, cmd("submit"), "--api", d.sock, "--circuit", "merkle", "--out", out, files[0])
		if err == nil || !strings.Contains(err.Error(), out) {
			t.Errorf("submit --out %s = %v", out, err)
		}
	}
	if jobs, _ := d.fake.List(ctx, api.ListFilter{Limit: 10}); len(jobs) != 0 {
		t.Fatalf("a bad --out still submitted %d jobs", len(jobs))
	}
	if _, _, err := run(ctx, cmd("submit"), "--api", d.sock, "--circuit", "merkle", files[0]); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(ctx, cmd("wait"), "--api", d.sock, "job-1", "--out", stale)
	if err == nil || !strings.Contains(err.Error(), "already holds proofs (0.public)") {
		t.Errorf("wait --out with stale proofs = %v", err)
	}
}

// After an interrupt or a lost connection, the hint to follow the job again names the
// daemon as the user did.
func TestFollowAgainHint(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0")
	srv := apitest.Serve(t, fake, api.Config{})
	cfg := filepath.Join(t.TempDir(), "my zkhost.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[api]\nsocket = %q\n", srv.SocketPath())), 0o600); err != nil {
		t.Fatal(err)
	}
	files, _ := writeWitnesses(t, 1)
	out := filepath.Join(t.TempDir(), "proofs")

	wctx, cancel := context.WithCancel(ctx)
	fake.OnSubmit = func(id string) {
		fake.WaitSubscribers(ctx, id, 1)
		cancel()
	}
	_, _, err := run(wctx, cmd("submit"), "--config", cfg, "--circuit", "merkle", "--out", out, files[0])
	want := "`zkhost wait job-1 --config '" + cfg + "' --out " + out + "` to follow it again"
	if err == nil || !strings.Contains(err.Error(), "job job-1 goes on in the daemon") || !strings.Contains(err.Error(), want) {
		t.Errorf("interrupted submit --wait = %v\nwant %s", err, want)
	}

	// The daemon goes away mid-wait.
	fake.OnSubmit = func(id string) {
		fake.WaitSubscribers(ctx, id, 1)
		stopped, cancel := context.WithCancel(ctx)
		cancel() // no grace: cut the stream
		srv.Stop(stopped)
	}
	_, _, err = run(ctx, cmd("submit"), "--api", srv.SocketPath(), "--circuit", "merkle", "--wait", files[0])
	want = "the job may still be running in the daemon (`zkhost wait job-2 --api " + srv.SocketPath() + "` to follow it again)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("submit --wait losing the daemon = %v\nwant %s", err, want)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/run/zkhost.sock": "/run/zkhost.sock", "host:7001": "host:7001",
		"my dir/x.toml": "'my dir/x.toml'", "it's": `'it'\''s'`, "": "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 partitions", 1: "1 partition", 2: "2 partitions"} {
		if got := plural(n, "partition"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestWitnessSizesCheckedBeforeReading: files that pass the message limit
// together, or are not regular files, are refused naming the file and the
// limit; the files are only stat'ed (a sparse 300 MiB file is never read).
func TestWitnessSizesCheckedBeforeReading(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.wtns")
	if err := os.WriteFile(small, []byte("w"), 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.wtns")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		{[]string{small, small}, nil},
		{[]string{small, huge}, []string{"300.0 MiB", huge, "256.0 MiB", "split the job"}},
		{[]string{small, dir}, []string{dir, "not a regular file"}},
		{[]string{filepath.Join(dir, "missing")}, []string{"missing"}},
	} {
		err := checkWitnessSizes(tc.files, api.DefaultMaxMessageBytes)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%v: %v", tc.files, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%v: accepted", tc.files)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", tc.files, err, w)
			}
		}
	}
}

// TestSubmitStreamsFiles: `zkhost submit` streams its files (a file of several
// chunks arrives whole; host/client's tests show a stream passing the message
// limit), and a file whose size is not the circuit's is refused by name before
// its bytes are sent.
func TestSubmitStreamsFiles(t *testing.T) {
	ctx := testCtx(t)
	d := newDaemon(t)
	const size = 5<<20 + 7 // five chunks and a piece
	d.fake.InputSize = size
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.wtns")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("end"), size-3); err != nil { // sparse, but not all zero
		t.Fatal(err)
	}
	f.Close()
	stdout, stderr, err := run(ctx, cmd("submit"), "--api", d.sock, "--circuit", "merkle", huge)
	if err != nil {
		t.Fatalf("submit of a %d-byte file: %v\n%s", size, err, stderr)
	}
	req, ok := d.fake.Request(strings.TrimSpace(stdout))
	if !ok || len(req.Witnesses) != 1 || len(req.Witnesses[0]) != size || !bytes.HasSuffix(req.Witnesses[0], []byte("end")) {
		t.Fatalf("the daemon did not get the file whole")
	}

	wrong, _ := writeWitnesses(t, 1)
	_, _, err = run(ctx, cmd("submit"), "--api", d.sock, "--circuit", "merkle", huge, wrong[0])
	if !errors.Is(err, api.ErrInvalidArgument) || !strings.Contains(err.Error(), "witness "+wrong[0]) || !strings.Contains(err.Error(), fmt.Sprint(size)) {
		t.Errorf("a file of the wrong size: %v; want InvalidArgument naming %s and %d bytes", err, wrong[0], size)
	}
}

func TestRegistry(t *testing.T) {
	noop := func(context.Context, Invocation) error { return nil }
	r := NewRegistry([]Group{{Name: "key", Summary: "keys"}},
		Command{Name: "key convert", Summary: "convert a key", Usage: "key convert --in F", Run: noop},
		Command{Name: "key import", Summary: "import keys", Usage: "key import --ccs F", Run: noop},
		Command{Name: "bench", Summary: "measure", Usage: "bench [flags]", Run: noop},
	)
	for _, tc := range []struct {
		args     []string
		name     string
		rest     []string
		ok       bool
		lookedUp string
	}{
		{[]string{"key", "convert", "--in", "f"}, "key convert", []string{"--in", "f"}, true, "key convert"},
		{[]string{"key", "--help"}, "", nil, false, "key"},
		{[]string{"key"}, "", nil, false, "key"},
		{[]string{"bench"}, "bench", []string{}, true, "bench"},
		{[]string{"nosuch", "x"}, "", nil, false, "nosuch"},
		{nil, "", nil, false, ""},
	} {
		c, rest, name, ok := r.Find(tc.args)
		if c.Name != tc.name || ok != tc.ok || name != tc.lookedUp || len(rest) != len(tc.rest) {
			t.Errorf("Find(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tc.args, c.Name, rest, name, ok, tc.name, tc.rest, tc.lookedUp, tc.ok)
		}
	}
	if g, ok := r.Group("key"); !ok || g.Summary != "keys" {
		t.Errorf("Group(key) = %v, %v", g, ok)
	}
	if _, ok := r.Group("bench"); ok {
		t.Errorf("bench is a command, not a group")
	}
	var help bytes.Buffer
	r.Help(&help)
	want := "" +
		"  bench  measure\n" +
		"  key    keys\n"
	if help.String() != want {
		t.Errorf("Help:\n%s\nwant:\n%s", help.String(), want)
	}
	help.Reset()
	r.GroupHelp(&help, "key")
	want = "" +
		"  key convert  convert a key\n" +
		"               zkhost key convert --in F\n" +
		"  key import   import keys\n" +
		"               zkhost key import --ccs F\n"
	if help.String() != want {
		t.Errorf("GroupHelp:\n%s\nwant:\n%s", help.String(), want)
	}
	if got := r.GroupCommands("key"); strings.Join(got, ",") != "key convert,key import" {
		t.Errorf("GroupCommands(key) = %q", got)
	}
	grp := []Group{{Name: "g", Summary: "s"}}
	for _, tc := range []struct {
		name   string
		groups []Group
		cmds   []Command
		want   string
	}{
		{"twice", nil, []Command{{Name: "a", Summary: "s", Usage: "a", Run: noop}, {Name: "a", Summary: "t", Usage: "a", Run: noop}}, `command "a" registered twice`},
		{"no summary", nil, []Command{{Name: "a", Usage: "a", Run: noop}}, `command "a" lacks`},
		{"no run", nil, []Command{{Name: "a", Summary: "s", Usage: "a"}}, `command "a" lacks`},
		{"usage of another", nil, []Command{{Name: "a", Summary: "s", Usage: "b [flags]", Run: noop}}, `usage of command "a" does not start with its name`},
		{"no group", nil, []Command{{Name: "g a", Summary: "s", Usage: "g a", Run: noop}}, `command "g a" is in no registered group "g"`},
		{"empty group", grp, []Command{{Name: "a", Summary: "s", Usage: "a", Run: noop}}, `group "g" has no commands`},
		{"group and command", grp, []Command{{Name: "g", Summary: "s", Usage: "g", Run: noop}, {Name: "g a", Summary: "s", Usage: "g a", Run: noop}}, `command "g" is also a group`},
		{"group without summary", []Group{{Name: "g"}}, nil, `group "g" lacks`},
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), tc.want) {
					t.Errorf("%s: NewRegistry panicked with %v, want %q", tc.name, p, tc.want)
				}
			}()
			NewRegistry(tc.groups, tc.cmds...)
		}()
	}
}

// TestAdminActionRefused: preload, evict and enable by a client that is not an
// admin fail with the daemon's PermissionDenied, which says which action needs
// the admin identity and who the caller is (main prints it after
// "zkhost CMD: "), and print nothing on stdout.
func TestAdminActionRefused(t *testing.T) {
	ctx := testCtx(t)
	dir := apitest.ShortTempDir(t)
	certFile, keyFile := apitest.WriteTLSFiles(t, dir)
	adminTok, aliceTok := filepath.Join(dir, "admin.token"), filepath.Join(dir, "alice.token")
	for path, tok := range map[string]string{adminTok: "admin-token-0123456789", aliceTok: "alice-token-0123456789"} {
		if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fake := apitest.NewFake("gpu0", "gpu1")
	fake.Circuits = map[string]bool{"merkle": true}
	srv := apitest.Serve(t, fake, api.Config{TCPAddr: "127.0.0.1:0", Credentials: api.Credentials{TLSCertFile: certFile, TLSKeyFile: keyFile, TokenFile: adminTok},
		Clients: []api.ClientConfig{{Name: "alice", TokenFile: aliceTok}}})
	for _, tc := range []struct {
		cmd, arg, action string
	}{
		{"preload", "merkle", "preload (PreloadKey)"},
		{"evict", "merkle", "evict (EvictKey)"},
		{"enable", "gpu1", "enable (EnableDevice)"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			flags := []string{"--api", srv.TCPAddr().String(), "--tls-ca", certFile, "--token-file", aliceTok, tc.arg}
			stdout, _, err := run(ctx, cmd(tc.cmd), flags...)
			want := tc.action + ` changes devices or keys for every client and needs the admin identity; client "alice" is not an admin`
			if err == nil || !strings.HasPrefix(err.Error(), want) || stdout != "" {
				t.Errorf("%s by alice: stdout %q, error %v; want nothing on stdout and an error starting %q", tc.cmd, stdout, err, want)
			}
			if !errors.Is(err, api.ErrPermissionDenied) {
				t.Errorf("%s by alice: %v is not api.ErrPermissionDenied", tc.cmd, err)
			}
			flags[5] = adminTok
			if _, _, err := run(ctx, cmd(tc.cmd), flags...); err != nil {
				t.Errorf("%s by the admin: %v", tc.cmd, err)
			}
		})
	}
}

// TestCircomWitnesses: circom witnesses are told by their magic, whatever their
// names; a job mixing them with other files is refused, naming one of each.
func TestCircomWitnesses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wtns := write("a.bin", "wtns\x02\x00\x00\x00")
	gnark := write("b.wtns", "\x00\x00\x00\x01 a gnark witness")
	short := write("c", "wt")
	for _, tc := range []struct {
		files []string
		want  bool
		err   string
	}{
		{[]string{wtns, wtns}, true, ""},
		{[]string{gnark, short}, false, ""},
		{nil, false, ""},
		{[]string{wtns, gnark}, false, wtns + " is a circom witness but " + gnark + " is not"},
		{[]string{filepath.Join(dir, "missing")}, false, "missing"},
	} {
		got, err := CircomWitnesses(tc.files)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want an error saying %q", tc.files, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.files, got, err, tc.want)
		}
	}
}
