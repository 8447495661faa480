package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// The synthesizer plugin tests serve the chain key set twice: as "chain", solved
// by the host's built-in solver, and under other names, each solved by its own
// faultsynth process (examples/faultsynth) with a fault. The built-in circuit's
// jobs show the daemon serves on whatever the plugins do.

// faultSynth writes a launcher for faultsynth with fault (empty for none): a
// script that sets the fault and execs a link of faultsynth of its own, so each
// synthesizer process can be found by its executable. once makes the fault
// strike a single time across restarts.
func faultSynth(t *testing.T, name, fault string, once bool) (script, exe string) {
	t.Helper()
	exe = linkBinary(t, synthBin(), name)
	env := fmt.Sprintf("ZKHOST_FAULT_SYNTH=%s", fault)
	if once {
		env += fmt.Sprintf(" ZKHOST_FAULT_SYNTH_ONCE=%s", filepath.Join(t.TempDir(), "struck"))
	}
	script = filepath.Join(t.TempDir(), name+".sh")
	text := fmt.Sprintf("#!/bin/sh\n%s exec %s \"$@\"\n", env, exe)
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, exe
}

// synthCircuits returns the [[circuit]] tables: chain (built-in) and, for each
// name, the chain key set solved by synthesizer synths[name] (extra[name]'s
// lines follow the synthesizer key).
func synthCircuits(synths map[string]string, extra map[string]string) string {
	return fmt.Sprintf("[[circuit]]\nname = \"chain\"\nkeys = %q\n\n", keyDir) + synthTables("chain", keyDir, synths, extra)
}

// synthTables returns a [[circuit]] table for each name of synths: the key set
// of fixture (in directory keys) solved by synthesizer synths[name], with
// extra[name]'s lines after the synthesizer key.
func synthTables(fixture, keys string, synths map[string]string, extra map[string]string) string {
	var b strings.Builder
	pk := filepath.Join(keys, fixtures[fixture].spec.ID()+".pk")
	for name, bin := range synths {
		fmt.Fprintf(&b, "[[circuit]]\nname = %q\nkeys = %q\npk = %q\nsynthesizer = %q\n%s\n", name, keys, pk, bin, extra[name])
	}
	return b.String()
}

// submitChainAs submits n valid chain partitions under circuit name.
func (h *host) submitChainAs(name string, seed uint64, n int) api.Job {
	h.t.Helper()
	return h.submitAs("chain", name, seed, n)
}

// submitAs submits n valid partitions of fixture under circuit name.
func (h *host) submitAs(fixture, name string, seed uint64, n int) api.Job {
	h.t.Helper()
	job, err := h.client.Submit(ctxFor(h.t, 30*time.Second), api.SubmitRequest{
		Circuit: name, Witnesses: witnesses(h.t, fixture, seed, n), Class: api.ClassNormal,
	})
	if err != nil {
		h.t.Fatalf("submit %s: %v", name, err)
	}
	return job
}

// TestSynthesizerPluginProves proves a multi-partition job whose partitions a
// synthesizer plugin solves, every proof verified with gnark.
func TestSynthesizerPluginProves(t *testing.T) {
	good, _ := faultSynth(t, "good-synth", "", false)
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}, Circuits: synthCircuits(map[string]string{"chainsynth": good}, nil)})
	h.start()
	job := h.submitChainAs("chainsynth", 41, 4)
	done, _ := h.await(job.ID, 2*time.Minute)
	checkDone(t, done, "chain", 41, 4)
	if !strings.Contains(h.logText(), "synthesizer ready") {
		t.Errorf("the daemon's log does not show the synthesizer starting:\n%s", h.logTail(40))
	}
	if files := h.shmFiles(); len(files) != 0 {
		t.Errorf("partition files left behind: %v", files)
	}
}

// TestSynthesizerPluginProvesBN254 serves the BN254 chain key set through
// faultsynth processes: a multi-partition job is proved, every proof verified
// with gnark's BN254 verifier; a synthesizer that changes an internal wire of
// its partition fails its job with the constraint the host's check names, and
// one that changes a public input is refused before any proof.
func TestSynthesizerPluginProvesBN254(t *testing.T) {
	good, _ := faultSynth(t, "good-synth-bn254", "", false)
	lie, _ := faultSynth(t, "lie-synth-bn254", "lie", false)
	liePub, _ := faultSynth(t, "lie-public-synth-bn254", "lie-public", false)
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}, MaxAttempts: 2, Circuits: synthTables("chain-bn254", keyDirBN254,
		map[string]string{"bnsynth": good, "bnlie": lie, "bnliepublic": liePub}, nil)})
	h.start()
	job := h.submitAs("chain-bn254", "bnsynth", 48, 3)
	lieJob := h.submitAs("chain-bn254", "bnlie", 49, 1)
	liePubJob := h.submitAs("chain-bn254", "bnliepublic", 49, 1)
	done, _ := h.await(job.ID, 2*time.Minute)
	checkDone(t, done, "chain-bn254", 48, 3)
	for _, c := range []struct {
		job  api.Job
		want string
	}{
		{lieJob, "wrote a partition that does not satisfy circuit bnlie (constraint"},
		{liePubJob, "wrote an unusable partition: public input 0 (W[1]) differs from the submitted witness"},
	} {
		failed, _ := h.await(c.job.ID, 2*time.Minute)
		t.Logf("%s: %s", c.job.Circuit, failed.Error)
		if failed.State != api.JobFailed || !strings.Contains(failed.Error, c.want) {
			t.Errorf("%s: job %s is %s with error %q, want failed saying %q", c.job.Circuit, failed.ID, failed.State, failed.Error, c.want)
		}
		for i, p := range failed.Partitions {
			if len(p.Proof) != 0 {
				t.Errorf("%s: partition %d of a failed job carries a proof", c.job.Circuit, i)
			}
		}
	}
	if files := h.shmFiles(); len(files) != 0 {
		t.Errorf("partition files left behind: %v", files)
	}
}

// TestSynthesizerCrashRestarted crashes the synthesizer in the middle of a
// partition, once: the host restarts it, requeues the partition, and the job
// completes; the built-in circuit is served meanwhile.
func TestSynthesizerCrashRestarted(t *testing.T) {
	crash, exe := faultSynth(t, "crash-synth", "crash", true)
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}, Circuits: synthCircuits(map[string]string{"chainsynth": crash}, nil)})
	h.start()
	first := h.backendPID(exe, 5*time.Second)
	job := h.submitChainAs("chainsynth", 42, 3)
	other := h.submit("chain", 43, 2, api.ClassNormal)
	done, events := h.await(job.ID, 2*time.Minute)
	checkDone(t, done, "chain", 42, 3)
	// The crash comes as soon as the first partition is synthesized, and
	// Await sends the events after it subscribed: a retry before that is in
	// the snapshot Await sends first (the partition's Error), one after it
	// is an event.
	retried := map[int]string{}
	for _, e := range events {
		switch {
		case e.Kind == api.EventSnapshot && e.Job != nil:
			for _, p := range e.Job.Partitions {
				if p.Error != "" {
					retried[p.Index] = p.Error
				}
			}
		case e.Kind == api.EventPartitionRetried:
			retried[e.Partition] = e.Reason
		}
	}
	if len(retried) != 1 {
		t.Errorf("retried partitions %v, want one saying the synthesizer process exited", retried)
	}
	for _, reason := range retried {
		if !strings.Contains(reason, "synthesizer process exited") {
			t.Errorf("retried partitions %v, want one saying the synthesizer process exited", retried)
		}
	}
	otherDone, _ := h.await(other.ID, 2*time.Minute)
	checkDone(t, otherDone, "chain", 43, 2)
	if pid := h.backendPID(exe, 5*time.Second); pid == first {
		t.Errorf("the synthesizer still runs as pid %d; it should have been restarted", pid)
	}
	if files := h.shmFiles(); len(files) != 0 {
		t.Errorf("partition files left behind (the crashed synthesizer's partial file must go): %v", files)
	}
}

// TestSynthesizerHangKilled hangs the synthesizer once: the host kills it after
// synthesizer_timeout, restarts it and retries, and the job completes.
func TestSynthesizerHangKilled(t *testing.T) {
	hang, exe := faultSynth(t, "hang-synth", "hang", true)
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}, Circuits: synthCircuits(
		map[string]string{"chainsynth": hang}, map[string]string{"chainsynth": "synthesizer_timeout = \"2s\""})})
	h.start()
	first := h.backendPID(exe, 5*time.Second)
	job := h.submitChainAs("chainsynth", 44, 2)
	done, events := h.await(job.ID, 2*time.Minute)
	checkDone(t, done, "chain", 44, 2)
	retried := eventsOf(events, api.EventPartitionRetried)
	if len(retried) != 1 || !strings.Contains(retried[0].Reason, "did not answer within 2s") {
		t.Errorf("retries %+v, want one saying the synthesizer did not answer within 2s", retried)
	}
	apitest.WaitFor(t, 15*time.Second, "the hung synthesizer to be gone", func() bool { return !alive(first) })
}

// TestSynthesizerLiesAndCrashLoops runs synthesizers that lie (a changed
// internal wire, a changed A, a changed public input), one that keeps its
// partition mapped writable (so it could change it under the backend) and one
// that crashes on every partition: each of their jobs fails with an error that says what the
// synthesizer did, no invalid proof is returned, and the built-in circuit's job
// completes beside them.
func TestSynthesizerLiesAndCrashLoops(t *testing.T) {
	lie, _ := faultSynth(t, "lie-synth", "lie", false)
	lieA, _ := faultSynth(t, "lie-a-synth", "lie-a", false)
	liePub, _ := faultSynth(t, "lie-public-synth", "lie-public", false)
	crash, _ := faultSynth(t, "crash-loop-synth", "crash", false)
	late, _ := faultSynth(t, "stdout-late-synth", "stdout-late", false)
	mapped, _ := faultSynth(t, "keep-mapped-synth", "keep-mapped", false)
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}, MaxAttempts: 2, Circuits: synthCircuits(map[string]string{
		"lie": lie, "liea": lieA, "liepublic": liePub, "crashloop": crash, "stdoutlate": late, "mapped": mapped,
	}, nil)})
	h.start()
	jobs := map[string]api.Job{}
	for _, name := range []string{"lie", "liea", "liepublic", "crashloop", "stdoutlate", "mapped"} {
		jobs[name] = h.submitChainAs(name, 45, 1)
	}
	builtin := h.submit("chain", 46, 2, api.ClassNormal)
	for name, want := range map[string]string{
		"lie":       "wrote a partition that does not satisfy circuit lie (constraint",
		"liea":      "A differs from the left side",
		"liepublic": "wrote an unusable partition: public input 0 (W[1]) differs from the submitted witness",
		"crashloop": "failed after 2 attempt(s): synthesis attempt 1 by synthesizer",
		"mapped":    "is still mapped writable",
	} {
		done, _ := h.await(jobs[name].ID, 2*time.Minute)
		t.Logf("%s: %s", name, done.Error)
		if done.State != api.JobFailed || !strings.Contains(done.Error, want) {
			t.Errorf("%s: job %s is %s with error %q, want failed saying %q", name, done.ID, done.State, done.Error, want)
		}
		for i, p := range done.Partitions {
			if len(p.Proof) != 0 {
				t.Errorf("%s: partition %d of a failed job carries a proof", name, i)
			}
		}
	}
	done, _ := h.await(jobs["stdoutlate"].ID, 2*time.Minute)
	checkDone(t, done, "chain", 45, 1)
	builtinDone, _ := h.await(builtin.ID, 2*time.Minute)
	checkDone(t, builtinDone, "chain", 46, 2)
	if !strings.Contains(h.logText(), "a synthesizer printing to stdout while it works") {
		t.Errorf("the synthesizer's late stdout did not reach the host's log")
	}
}

// TestSynthesizerStdoutBeforeServing configures a synthesizer that prints to
// standard output before go-plugin's handshake: the daemon refuses to start,
// naming the circuit and the binary.
func TestSynthesizerStdoutBeforeServing(t *testing.T) {
	noisy, _ := faultSynth(t, "noisy-synth", "stdout", false)
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}, Circuits: synthCircuits(map[string]string{"noisy": noisy}, nil)})
	if err := h.tryStart(30 * time.Second); err == nil {
		t.Fatal("the daemon started with a synthesizer that breaks the handshake")
	}
	log := h.logText()
	for _, want := range []string{`circuit[1] "noisy"`, "starting synthesizer " + noisy} {
		if !strings.Contains(log, want) {
			t.Errorf("the daemon's error does not say %q:\n%s", want, h.logTail(20))
		}
	}
}
