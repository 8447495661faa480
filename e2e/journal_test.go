package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
