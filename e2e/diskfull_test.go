package e2e

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// TestDiskFullMidJob fills the daemon's disk while a job is being proved, then
// frees it. The disk is filled with a file-size limit set on the daemon
// process (prlimit RLIMIT_FSIZE to 4 KiB): from then every write the daemon
// makes past 4 KiB of a file, its journal's pages and its shared-memory
// partition files included, fails in the kernel with EFBIG, the error a
// filesystem gives a file that may not grow. A tmpfs of fixed size would need
// root (or a user namespace, which many CI sandboxes forbid), and the daemon
// treats EFBIG as it treats ENOSPC and EDQUOT.
//
// While the disk is full: a new job is refused with ResourceExhausted naming
// the state directory, status says the journal is short of space, the
// accepted job is not failed (its proofs wait to be recorded). When the disk
// is freed, the daemon resumes by itself: the accepted job ends done with
// every proof verified, and a new job is accepted and done.
func TestDiskFullMidJob(t *testing.T) {
	slow := faultDevice(map[string]string{"slow": "400ms"})
	h := newHost(t, hostConf{Devices: []deviceConf{slow}, Workers: 2})
	h.start()
	const parts = 8
	job := h.submit("chain", 31, parts, api.ClassNormal)
	apitest.WaitFor(t, 60*time.Second, "the job to have a verified partition", func() bool {
		j, err := h.client.Get(ctxFor(t, 10*time.Second), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		verified := 0
		for _, p := range j.Partitions {
			if p.State == api.PartitionVerified {
				verified++
			}
		}
		return verified > 0 && verified < parts
	})

	pid := h.pid()
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, nil, &old); err != nil {
		t.Fatal(err)
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 4 << 10, Max: old.Max}, nil); err != nil {
		t.Fatal(err)
	}
	freed := false
	free := func() {
		if !freed {
			freed = true
			if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &old, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer free()

	_, err := h.client.Submit(ctxFor(t, 30*time.Second), api.SubmitRequest{
		Circuit: "chain", Witnesses: witnesses(t, "chain", 32, 2), Class: api.ClassNormal,
	})
	var re *api.ResourceExhaustedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), h.stateDir) || !strings.Contains(err.Error(), "free") {
		t.Fatalf("submit on a full disk: %v, want ResourceExhausted naming the state directory %s and the space needed", err, h.stateDir)
	}
	st := h.status()
	if st.Journal.Writable || st.Journal.Dir != h.stateDir || st.Journal.LastError == "" {
		t.Errorf("status on a full disk: journal %+v, want not writable, in %s, with the storage error", st.Journal, h.stateDir)
	}
	// A proof that finished meanwhile could not be recorded: it waits.
	apitest.WaitFor(t, 60*time.Second, "a journal write to be retried", func() bool { return h.status().Journal.WriteRetries > 0 })
	if j, err := h.client.Get(ctxFor(t, 10*time.Second), job.ID); err != nil || j.State.Terminal() {
		t.Fatalf("accepted job on a full disk: %s (%s), %v; want it still running", j.State, j.Error, err)
	}

	free()
	done, events := h.await(job.ID, 3*time.Minute)
	checkDone(t, done, "chain", 31, parts)
	if failed := eventsOf(events, api.EventPartitionFailed); len(failed) > 0 {
		t.Errorf("partitions failed across the full disk: %+v", failed)
	}
	apitest.WaitFor(t, 60*time.Second, "the journal to be writable again", func() bool {
		j := h.status().Journal
		return j.Writable && j.ReserveHeld
	})
	next := h.submit("chain", 33, 2, api.ClassNormal)
	done, _ = h.await(next.ID, 2*time.Minute)
	checkDone(t, done, "chain", 33, 2)

	// The proofs were recorded, not only held: they survive a restart.
	h.stop()
	h.start()
	again, err := h.client.Get(ctxFor(t, 10*time.Second), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkDone(t, again, "chain", 31, parts)
}
