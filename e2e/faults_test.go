package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// TestKillMidProof kills a backend with SIGKILL while it proves: its partition
// is requeued and retried (on the other device when there is one), the backend
// restarts, and the job completes with valid proofs.
func TestKillMidProof(t *testing.T) {
	for _, tc := range []struct {
		name    string
		devices int
	}{{"one device", 1}, {"two devices", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			// dev0 proves slowly (the CPU prover behind a 1.5 s sleep), so the
			// kill surely lands inside its Prove call.
			slow := linkBinary(t, faultBin(), "slow-backend")
			devs := []deviceConf{{Backend: slow, Options: map[string]string{"threads": "1", "slow": "1500ms"}}}
			if tc.devices == 2 {
				devs = append(devs, cpuDevice())
			}
			h := newHost(t, hostConf{Devices: devs, MaxAttempts: 3})
			h.start()
			job := h.submit("chain", 11, 4, api.ClassNormal)

			apitest.WaitFor(t, 30*time.Second, "dev0 to be proving", func() bool { return h.device("dev0").InFlight > 0 })
			victim := h.backendPID(slow, time.Second)
			if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			done, events := h.await(job.ID, 2*time.Minute)
			checkDone(t, done, "chain", 11, 4)

			retried := eventsOf(events, api.EventPartitionRetried)
			// Only the partition in flight pays an attempt: calls made before the
			// supervisor saw the exit must wait for the restart, not fail.
			if len(retried) != 1 {
				t.Fatalf("%d retries after one kill of a device holding one partition, want 1; events: %v", len(retried), kinds(events))
			}
			for _, e := range retried {
				if e.Device != "dev0" || !strings.Contains(e.Reason, "backend process exited") {
					t.Errorf("retry of partition %d on %s: %q, want a crash of dev0", e.Partition, e.Device, e.Reason)
				}
				if tc.devices == 2 {
					if p := done.Partitions[e.Partition]; p.Device != "dev1" {
						t.Errorf("partition %d was retried on %s, want the other device dev1", e.Partition, p.Device)
					}
				}
			}
			// The backend came back as a new process and the device is healthy.
			apitest.WaitFor(t, 10*time.Second, "dev0 to restart", func() bool {
				d := h.device("dev0")
				return d.Restarts >= 1 && d.Healthy && d.Error == ""
			})
			if pid := h.backendPID(slow, 5*time.Second); pid == victim {
				t.Errorf("dev0 still runs as pid %d, the killed process", pid)
			}
			if files := h.shmFiles(); len(files) > 0 {
				t.Errorf("partitions still held after the job: %v", files)
			}
			h.stop()
		})
	}
}

// TestInvalidProofRetriedElsewhere runs a device that answers only invalid proofs
// next to a good CPU device: no invalid proof reaches the client, and every
// partition dev0 spoiled is proved again on dev1.
func TestInvalidProofRetriedElsewhere(t *testing.T) {
	for _, how := range []string{"negate", "garbage"} {
		t.Run(how, func(t *testing.T) {
			h := newHost(t, hostConf{Devices: []deviceConf{
				faultDevice(map[string]string{"invalid-p": "1", "invalid-how": how}),
				cpuDevice(),
			}, MaxAttempts: 3})
			h.start()
			job := h.submit("chain", 21, 6, api.ClassNormal)
			done, events := h.await(job.ID, 2*time.Minute)
			checkDone(t, done, "chain", 21, 6)
			want := "groth16 verification failed"
			if how == "garbage" {
				want = "does not decode"
			}
			checkRetried(t, events, "dev0", want, "dev0 returns only bad proofs and should have taken partitions")
			for i, p := range done.Partitions {
				if p.Device != "dev1" {
					t.Errorf("partition %d was verified from %s; only dev1 proves correctly", i, p.Device)
				}
			}
			if !strings.Contains(h.logText(), "device returned a proof that does not verify") {
				t.Errorf("the daemon log does not report the invalid proofs")
			}
		})
	}
}

// TestHangKilledAfterDeadline runs a device that never answers a Prove: after
// the prove timeout the host kills it, handles it as a crash and proves the
// partition on the other device.
func TestHangKilledAfterDeadline(t *testing.T) {
	hang := linkBinary(t, faultBin(), "hang-backend")
	h := newHost(t, hostConf{Devices: []deviceConf{
		{Backend: hang, Options: map[string]string{"threads": "1", "hang": "prove-start"}},
		cpuDevice(),
	}, MaxAttempts: 3, ProveTimeout: 2 * time.Second})
	h.start()
	first := h.backendPID(hang, 5*time.Second)
	start := time.Now()
	job := h.submit("chain", 31, 3, api.ClassNormal)
	done, events := h.await(job.ID, 2*time.Minute)
	checkDone(t, done, "chain", 31, 3)
	checkRetried(t, events, "dev0", "did not answer within 2s", "dev0 should have hung on one")
	if el := time.Since(start); el < 2*time.Second {
		t.Errorf("job done in %s, before the 2s deadline could pass", el)
	}
	apitest.WaitFor(t, 15*time.Second, "the hung backend to be replaced", func() bool {
		pid := h.backendPID(hang, 5*time.Second)
		return pid != first && h.device("dev0").Restarts >= 1
	})
	if alive(first) {
		t.Errorf("the hung backend (pid %d) is still alive", first)
	}
}

// TestAttemptsExhausted fails a job whose only device fails every attempt; the
// job's error lists the reason of every attempt.
func TestAttemptsExhausted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     map[string]string
		attempts int
		timeout  time.Duration
		reason   string
	}{
		{"invalid proofs", map[string]string{"invalid-p": "1"}, 3, 0, "groth16 verification failed"},
		{"crash mid-proof", map[string]string{"crash": "prove-mid"}, 3, 0, "backend process exited"},
		{"hang", map[string]string{"hang": "prove-start"}, 2, time.Second, "did not answer within 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, hostConf{Devices: []deviceConf{faultDevice(tc.opts)}, MaxAttempts: tc.attempts, ProveTimeout: tc.timeout})
			h.start()
			job := h.submit("chain", 41, 1, api.ClassNormal)
			done, _ := h.await(job.ID, 2*time.Minute)
			if done.State != api.JobFailed {
				t.Fatalf("job is %s, want failed", done.State)
			}
			if want := "partition 0 failed after " + strconv.Itoa(tc.attempts) + " attempt(s)"; !strings.Contains(done.Error, want) {
				t.Errorf("job error %q does not say %q", done.Error, want)
			}
			for a := 1; a <= tc.attempts; a++ {
				if want := "attempt " + strconv.Itoa(a) + " on dev0"; !strings.Contains(done.Error, want) {
					t.Errorf("job error %q lacks %q", done.Error, want)
				}
			}
			if n := strings.Count(done.Error, tc.reason); n != tc.attempts {
				t.Errorf("job error names %q %d times, want %d: %s", tc.reason, n, tc.attempts, done.Error)
			}
			if p := done.Partitions[0]; p.State != api.PartitionFailed || len(p.Proof) != 0 {
				t.Errorf("partition 0 is %s with %d proof bytes", p.State, len(p.Proof))
			}
		})
	}
}

// TestCrashLoopUnhealthyCPUFallback runs a "GPU" (the fault backend claiming kind
// cuda) that crashes on every Prove next to a CPU device. The CPU device stands by
// while the GPU is healthy; after crash_limit crashes the GPU is unhealthy in
// Status, the work goes to the CPU fallback, and the job completes.
func TestCrashLoopUnhealthyCPUFallback(t *testing.T) {
	h := newHost(t, hostConf{Devices: []deviceConf{
		faultDevice(map[string]string{"kind": "cuda", "crash": "prove-start"}),
		cpuDevice(),
	}, MaxAttempts: 6, CrashLimit: 3, CrashWindow: 10 * time.Minute})
	h.start()
	if d := h.device("dev1"); !d.Healthy || !strings.Contains(d.Error, "standby") {
		t.Errorf("CPU device before any crash: healthy %v, %q; want a healthy standby", d.Healthy, d.Error)
	}
	job := h.submit("chain", 51, 4, api.ClassNormal)
	done, events := h.await(job.ID, 2*time.Minute)
	checkDone(t, done, "chain", 51, 4)

	gpu := h.device("dev0")
	if gpu.Healthy || !strings.Contains(gpu.Error, "unhealthy: 3 crashes") {
		t.Errorf("GPU after 3 crashes: healthy %v, error %q; want unhealthy", gpu.Healthy, gpu.Error)
	}
	cpu := h.device("dev1")
	if !cpu.Healthy || !strings.Contains(cpu.Error, "CPU fallback: no healthy GPU remains") {
		t.Errorf("CPU device: healthy %v, %q; want it to say it is the fallback now", cpu.Healthy, cpu.Error)
	}
	// Every crash happened on the GPU (before it was given up), and the CPU
	// proved nothing while the GPU was in service.
	crashes := 0
	for _, e := range eventsOf(events, api.EventPartitionRetried) {
		if e.Device != "dev0" {
			t.Errorf("retry of partition %d on %s: %q; only the GPU fails", e.Partition, e.Device, e.Reason)
		}
		crashes++
	}
	if crashes != 3 {
		t.Errorf("%d failed attempts on the GPU, want 3 (its crash limit)", crashes)
	}
	for i, p := range done.Partitions {
		if p.Device != "dev1" {
			t.Errorf("partition %d verified from %s, want the CPU fallback dev1", i, p.Device)
		}
	}
	// The CPU took its first partition only once the GPU was out of service
	// (the supervisor logs that right after the state changes; log times have
	// millisecond precision).
	m := regexp.MustCompile(`(?m)^(\S+) \[ERROR\] +zkhost\.device\.dev0: backend crashed too often; taken out of service`).FindStringSubmatch(h.logText())
	if m == nil {
		t.Fatal("the daemon did not log taking dev0 out of service")
	}
	unhealthyAt, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eventsOf(events, api.EventPartitionProving) {
		if e.Device == "dev1" {
			if e.Time.Before(unhealthyAt.Add(-20 * time.Millisecond)) {
				t.Errorf("the CPU device started proving at %s, before the GPU was given up at %s", e.Time.Format(time.StampMicro), unhealthyAt.Format(time.StampMicro))
			}
			break
		}
	}
	// The daemon keeps serving on the fallback.
	more := h.submit("merkle", 52, 2, api.ClassHigh)
	again, _ := h.await(more.ID, time.Minute)
	checkDone(t, again, "merkle", 52, 2)
}

// kinds lists the kinds of events, for failure messages.
func kinds(events []api.JobEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Kind.String() + "@" + e.Device
	}
	return out
}

// TestVerifyCommand checks `zkhost verify` (the soak's independent verifier) on
// proofs from the daemon: it passes them, and fails a proof checked against
// another partition's public witness or against another circuit's key.
func TestVerifyCommand(t *testing.T) {
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}})
	h.start()
	job := h.submit("chain", 71, 2, api.ClassNormal)
	done, _ := h.await(job.ID, time.Minute)
	checkDone(t, done, "chain", 71, 2)
	dir := t.TempDir()
	writeProofs(t, dir, done)
	run := func(args ...string) (string, error) {
		out, err := exec.Command(zkhostBin(), append([]string{"verify"}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := run("--keys", keyDir, "--circuit", "chain", dir)
	if err != nil || !strings.Contains(out, "2 of 2 proofs verify") {
		t.Fatalf("verify a directory: %v\n%s", err, out)
	}
	p0, p1 := filepath.Join(dir, "0.proof"), filepath.Join(dir, "1.public")
	out, err = run("--keys", keyDir, "--circuit", "chain", p0, p1)
	if err == nil || !strings.Contains(out, "FAIL "+p0) || !strings.Contains(out, "0 of 1 proof verify") {
		t.Errorf("proof 0 against public witness 1: %v\n%s", err, out)
	}
	out, err = run("--keys", keyDir, "--circuit", "merkle", dir)
	if err == nil || !strings.Contains(out, "0 of 2 proofs verify") {
		t.Errorf("chain proofs against merkle's key: %v\n%s", err, out)
	}
	out, err = run("--keys", keyDir, "--circuit", "chain", p0)
	if err == nil || !strings.Contains(out, "has no public witness file after it") {
		t.Errorf("a proof without its public witness: %v\n%s", err, out)
	}
}

// TestCurveRouting runs a "GPU" of BLS12-381 only (the fault backend claiming kind
// cuda and that one curve, as the CUDA backend declares it) next to a CPU device,
// for a BLS12-381 circuit and a BN254 one: the daemon starts, the GPU proves the
// BLS12-381 job while the CPU stands by, and the BN254 job goes to the CPU, the one
// device that proves on its curve, every proof verified.
func TestCurveRouting(t *testing.T) {
	bn254 := filepath.Join(keyDirBN254, fixtures["chain-bn254"].spec.ID())
	h := newHost(t, hostConf{
		Devices: []deviceConf{faultDevice(map[string]string{"kind": "cuda", "curves": "bls12-381"}), cpuDevice()},
		Circuits: fmt.Sprintf("[[circuit]]\nname = \"chain\"\nkeys = %q\n\n[[circuit]]\nname = \"chain-bn254\"\nccs = %q\npk = %q\nvk = %q\n\n",
			keyDir, bn254+circuit.ExtCCS, bn254+circuit.ExtPK, bn254+circuit.ExtVK),
	})
	h.start()
	for _, c := range []struct{ name, device string }{{"chain-bn254", "dev1"}, {"chain", "dev0"}} {
		job := h.submit(c.name, 61, 2, api.ClassNormal)
		done, _ := h.await(job.ID, 2*time.Minute)
		checkDone(t, done, c.name, 61, 2)
		for i, p := range done.Partitions {
			if p.Device != c.device {
				t.Errorf("%s: partition %d proved on %s, want %s", c.name, i, p.Device, c.device)
			}
		}
	}
}
