package cluster

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zkhost/zkhost/host/api"
)

// queueJob records a job of inputs and queues its partitions as Submit does:
// the inputs above the member's inline limit go to the object store.
func queueJob(t *testing.T, c *Cluster, inputs [][]byte) *jobRecord {
	t.Helper()
	rec := createJob(t, c, len(inputs), api.ClassNormal)
	rec.markObjects(inputs, c.inlineMax())
	if _, err := c.updateJob(context.Background(), rec.ID, func(r *jobRecord) bool { r.Objects = rec.Objects; return true }); err != nil {
		t.Fatal(err)
	}
	if err := c.publish(context.Background(), rec, inputs, false); err != nil {
		t.Fatal(err)
	}
	return rec
}

// pull takes the next partition message of job and its index; another
// job's (left by a subtest that failed) is dropped.
func pull(t *testing.T, c *Cluster, job string) (jetstream.Msg, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var m jetstream.Msg
	for {
		if m = c.next(ctx, c.cons[:]); m == nil {
			t.Fatal("no partition")
		}
		if strings.HasSuffix(m.Subject(), "."+job) {
			break
		}
		m.Term()
	}
	idx, err := strconv.Atoi(m.Headers().Get(hdrPartition))
	if err != nil {
		t.Fatal(err)
	}
	return m, idx
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed)})
	r.Read(b)
	return b
}

// objectGone fails unless object name is gone, or goes within 30s (a
// replica may lag a moment behind the delete).
func objectGone(t *testing.T, c *Cluster, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := c.inputs.GetInfo(context.Background(), name)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("object %s after its job ended: %v, want it gone", name, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// objectThere fails unless object name is there, or is within 30s.
func objectThere(t *testing.T, c *Cluster, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := c.inputs.GetInfo(context.Background(), name)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("object %s before its job ended: %v", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLargeInputs: on three servers (replicas 3) whose max_payload is 8 MiB,
// a partition of 9 MiB travels through the object store and another of 100
// bytes in its message; a host reads both back exactly; a corrupt or missing
// object fails its job with an error naming the job, the partition and what
// is wrong; the objects are deleted when the job ends (done, failed,
// cancelled), not before.
func TestLargeInputs(t *testing.T) {
	urls := startServers(t, 3)
	a, b := member(t, urls[:1], "h0", 3), member(t, urls[1:2], "h1", 3)
	if got := int(a.nc.MaxPayload()); got != 8<<20 {
		t.Fatalf("max_payload %d, want 8 MiB", got)
	}
	ctx := context.Background()
	big, small := randomBytes(9<<20, 1), randomBytes(100, 2)

	t.Run("done", func(t *testing.T) {
		rec := queueJob(t, a, [][]byte{small, big})
		if rec.inObject(0) || !rec.inObject(1) {
			t.Fatalf("objects %08b, want partition 1 only", rec.Objects)
		}
		for range 2 {
			m, idx := pull(t, b, rec.ID)
			got, err := b.readInput(ctx, m, rec.ID, idx)
			if err != nil {
				t.Fatal(err)
			}
			want := [][]byte{small, big}[idx]
			if !bytes.Equal(got, want) {
				t.Fatalf("partition %d: read %d bytes, not the %d submitted", idx, len(got), len(want))
			}
			if idx == 0 && len(m.Data()) != len(small) || idx == 1 && len(m.Data()) != 0 {
				t.Errorf("partition %d: the message carries %d bytes", idx, len(m.Data()))
			}
			// The job's objects stay until its last partition is recorded.
			objectThere(t, b, inputName(rec.ID, 1))
			if err := b.recordProof(ctx, rec.ID, idx, proofRecord{Proof: []byte{1}, Host: "h1"}); err != nil {
				t.Fatal(err)
			}
			m.Ack()
		}
		objectGone(t, a, inputName(rec.ID, 1))
	})

	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, name string)
		want   string
	}{
		{"corrupt", func(t *testing.T, name string) {
			// Another content under the name: the object store's own digest
			// matches it; the message's does not.
			bad := randomBytes(9<<20, 3)
			putObject(t, a.inputs, name, bad)
			seenBy(t, b, name, bad)
		}, "sha256"},
		{"truncated", func(t *testing.T, name string) {
			putObject(t, a.inputs, name, big[:len(big)-1])
			seenBy(t, b, name, big[:len(big)-1])
		}, "9437183 bytes, the message says 9437184"},
		{"missing", func(t *testing.T, name string) {
			// A replica that lags answers "not found" for a moment.
			deadline := time.Now().Add(30 * time.Second)
			for {
				err := a.inputs.Delete(ctx, name)
				if err == nil {
					break
				}
				if !errors.Is(err, jetstream.ErrObjectNotFound) || time.Now().After(deadline) {
					t.Fatal(err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := queueJob(t, a, [][]byte{big})
			name := inputName(rec.ID, 0)
			tc.damage(t, name)
			// The whole path of a pulled partition: it fails before the
			// local daemon (none here) is asked anything. A read that
			// failed otherwise (a timeout on this loaded machine) hands
			// the partition back, as it would to another host.
			var got api.Job
			for try := 0; ; try++ {
				m, _ := pull(t, b, rec.ID)
				b.handle(ctx, m)
				var err error
				if got, err = a.Get(ctx, rec.ID); err != nil {
					t.Fatal(err)
				}
				if got.State.Terminal() || try == 5 {
					break
				}
			}
			wantErr := "job " + rec.ID + " partition 0: input object " + name + " in bucket zkhost_inputs: "
			if got.State != api.JobFailed || !strings.Contains(got.Error, wantErr) || !strings.Contains(got.Error, tc.want) {
				t.Errorf("job is %s (%q), want failed with %q ... %q", got.State, got.Error, wantErr, tc.want)
			}
			objectGone(t, a, name)
			// The failed partition is not queued again.
			if m, err := b.cons[2].FetchNoWait(1); err == nil {
				for range m.Messages() {
					t.Error("the failed partition was delivered again")
				}
			}
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		rec := queueJob(t, a, [][]byte{big, big})
		if _, err := b.Cancel(ctx, rec.ID); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			objectGone(t, a, inputName(rec.ID, i))
		}
	})
}

// TestInlineLimit: the inline limit is inline_max, and never more than the
// servers' max_payload leaves for an input beside its headers.
func TestInlineLimit(t *testing.T) {
	urls := startServers(t, 1)
	c := member(t, urls, "h0", 1)
	for _, tc := range []struct {
		inline uint64
		want   int
	}{
		{0, 1 << 20},
		{4 << 10, 4 << 10},
		{64 << 20, 8<<20 - 1<<10},
	} {
		c.cfg.InlineMax = tc.inline
		if got := c.inlineMax(); got != tc.want {
			t.Errorf("inline_max %d: limit %d, want %d", tc.inline, got, tc.want)
		}
	}
	r := newJobRecord("x", api.SubmitRequest{Circuit: "c", Witnesses: make([][]byte, 10)}, "", "h")
	r.markObjects([][]byte{make([]byte, 10), make([]byte, 11), nil, nil, nil, nil, nil, nil, nil, make([]byte, 11)}, 10)
	for i := range 10 {
		if r.inObject(i) != (i == 1 || i == 9) {
			t.Errorf("partition %d: in object %v", i, r.inObject(i))
		}
	}
}

// seenBy waits until host c reads object name as data: a replica that lags
// serves the object's previous content for a moment, and the damage under
// test is the one the reading host sees. It allows the two minutes putObject
// allows a put: a 9 MiB read from three replicas timed out after 30 s on a
// machine running make test beside two busy loops.
func seenBy(t *testing.T, c *Cluster, name string, data []byte) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		got, err := c.inputs.GetBytes(ctx, name)
		cancel()
		if err == nil && bytes.Equal(got, data) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("object %s not seen as its %d new bytes within 2 minutes (%d bytes, %v)", name, len(data), len(got), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// putObject stores data under name in store, with the time putInput gives
// a put (a minute and more): without a deadline each chunk's publish waits
// the client's default 5 s for its acknowledgement, which three replicas on
// a loaded machine can exceed (seen beside two busy loops under -race).
func putObject(t *testing.T, store jetstream.ObjectStore, name string, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := store.PutBytes(ctx, name, data); err != nil {
		t.Fatalf("storing %d bytes as object %s: %v", len(data), name, err)
	}
}
