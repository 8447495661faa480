package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/zkhost/zkhost/host/api"
)

// TestCorruptJournal damages the journal of a stopped daemon. bbolt keeps two
// meta pages, written in turn: one damaged meta page costs at most the last
// transaction, and the daemon starts on the other and still has every job
// (one whose last write was lost is resumed, its proofs kept). A journal whose
// both meta pages are damaged is refused at start with an error naming the
// file, and the daemon starts nothing (an operator restores it).
func TestCorruptJournal(t *testing.T) {
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}})
	h.start()
	first := h.submit("chain", 71, 3, api.ClassNormal)
	done, _ := h.await(first.ID, 2*time.Minute)
	checkDone(t, done, "chain", 71, 3)
	second := h.submit("chain", 72, 2, api.ClassNormal)
	done, _ = h.await(second.ID, 2*time.Minute)
	checkDone(t, done, "chain", 72, 2)
	h.stop()

	path := filepath.Join(h.stateDir, "journal.db")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := os.Getpagesize()
	damage := func(pages ...int) {
		b := append([]byte(nil), orig...)
		for _, p := range pages {
			for i := p*pageSize + 16; i < p*pageSize+80; i++ {
				b[i] ^= 0xA5
			}
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, page := range []int{0, 1} {
		damage(page)
		h.start()
		for _, job := range []struct {
			id   string
			seed uint64
			n    int
		}{{first.ID, 71, 3}, {second.ID, 72, 2}} {
			got, _ := h.await(job.id, 2*time.Minute)
			checkDone(t, got, "chain", job.seed, job.n)
		}
		h.stop()
	}

	damage(0, 1)
	err = h.tryStart(20 * time.Second)
	if err == nil {
		t.Fatal("the daemon started on a journal whose both meta pages are damaged")
	}
	if log := h.logTail(5); !strings.Contains(log, path) || !strings.Contains(log, "damaged; restore it from a backup") {
		t.Errorf("refusal does not name the journal %s and what to do:\n%s", path, log)
	}
}

// TestDamagedJournalRecords damages a stopped daemon's journal as a disk
// would. A byte flipped inside a job's stored proofs fails that job at the next
// start, with the reason, and every other job is served done with verified
// proofs. An empty journal, and one cut short, stop the daemon at start with
// an error naming the file and the way out (no panic, no silent empty start);
// moving the file aside, as that error says, starts an empty journal.
func TestDamagedJournalRecords(t *testing.T) {
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}})
	h.start()
	jobs := []struct {
		seed uint64
		n    int
		job  api.Job
	}{{81, 2, api.Job{}}, {82, 3, api.Job{}}, {83, 2, api.Job{}}}
	for i := range jobs {
		jobs[i].job, _ = h.await(h.submit("chain", jobs[i].seed, jobs[i].n, api.ClassNormal).ID, 2*time.Minute)
		checkDone(t, jobs[i].job, "chain", jobs[i].seed, jobs[i].n)
	}
	h.stop()

	path := filepath.Join(h.stateDir, "journal.db")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// One byte in the middle of each of the second job's proofs, in every
	// copy bbolt left of it.
	for _, p := range jobs[1].job.Partitions {
		found := false
		for off := 0; ; {
			i := bytes.Index(data[off:], p.Proof)
			if i < 0 {
				break
			}
			data[off+i+len(p.Proof)/2] ^= 0x10
			off += i + len(p.Proof)
			found = true
		}
		if !found {
			t.Fatalf("partition %d's proof is not in the journal", p.Index)
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	h.start()
	for i, j := range jobs {
		got, err := h.client.Get(ctxFor(t, time.Minute), j.job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if i != 1 {
			checkDone(t, got, "chain", j.seed, j.n)
			continue
		}
		if got.State != api.JobFailed || !strings.Contains(got.Error, "damaged record: the proof of partition 0 does not match its checksum") {
			t.Errorf("the job with damaged proofs is %s (%q), want failed with the reason", got.State, got.Error)
		}
		for _, p := range got.Partitions {
			if p.Proof != nil {
				t.Errorf("the damaged job served partition %d's proof", p.Index)
			}
		}
	}
	if log := h.logText(); !strings.Contains(log, "damaged in the journal; the job is failed") {
		t.Errorf("the log does not say a job was failed for a damaged record:\n%s", h.logTail(30))
	}
	h.stop()

	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil })
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "it is empty (0 bytes)"},
		{"cut short", good[:used/2], "journal file is damaged"},
	} {
		if err := os.WriteFile(path, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := h.tryStart(30 * time.Second); err == nil {
			h.stop()
			t.Errorf("the daemon started on a journal %s", tc.name)
			continue
		}
		log := h.logTail(10)
		if !strings.Contains(log, path) || !strings.Contains(log, tc.want) || !strings.Contains(log, "move it aside (mv journal.db journal.db.damaged)") {
			t.Errorf("refusal of a journal %s does not name %s, say %q and the way out:\n%s", tc.name, path, tc.want, log)
		}
		if strings.Contains(log, "panic") || strings.Contains(log, "goroutine ") {
			t.Errorf("the daemon panicked on a journal %s:\n%s", tc.name, log)
		}
	}

	// The way out.
	if err := os.Rename(path, path+".damaged"); err != nil {
		t.Fatal(err)
	}
	h.start()
	if list, err := h.client.List(ctxFor(t, time.Minute), api.ListFilter{}); err != nil || len(list) != 0 {
		t.Errorf("after the damaged journal was moved aside: %d jobs, %v; want none", len(list), err)
	}
	h.stop()
}
