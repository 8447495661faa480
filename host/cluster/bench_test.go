package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/journal"
)

// BenchmarkQueueCost is what the cluster adds to one partition, proving
// aside: publish (with the job's record), pull, read the job, store the proof
// once, mark it by compare-and-set, ack. On one server (replicas 1) and on
// three (replicas 3, every write a raft round), all in this process.
func BenchmarkQueueCost(b *testing.B) {
	for _, servers := range []int{1, 3} {
		b.Run(fmt.Sprintf("servers=%d", servers), func(b *testing.B) {
			urls := startServers(b, servers)
			c := member(b, urls, "h0", servers)
			ctx := context.Background()
			proof := make([]byte, 400) // a BLS12-381 Groth16 proof is a few hundred bytes
			input := make([]byte, 1<<10)
			b.ResetTimer()
			start := time.Now()
			rec := createJob(b, c, b.N, api.ClassNormal)
			inputs := make([][]byte, b.N)
			for i := range inputs {
				inputs[i] = input
			}
			if err := c.publish(ctx, rec, inputs, false); err != nil {
				b.Fatal(err)
			}
			for range b.N {
				m := c.next(ctx, c.cons[:])
				idx := 0
				fmt.Sscan(m.Headers().Get(hdrPartition), &idx)
				if _, _, err := c.getJob(ctx, rec.ID); err != nil {
					b.Fatal(err)
				}
				if err := c.recordProof(ctx, rec.ID, idx, proofRecord{Proof: proof, Host: "h0"}); err != nil {
					b.Fatal(err)
				}
				if err := m.DoubleAck(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/partition")
		})
	}
}

// BenchmarkResultsStore measures the two ways considered for keeping
// results where any host can serve them, on the same embedded cluster of
// three NATS servers (replicas 3), with three hosts, one on each server:
//
//   - kv: what the cluster does. A result is a proof stored with KV Create
//     and the job record's compare-and-set (recordProof); any host reads it
//     from the bucket.
//   - stream: the alternative. A result is published to a results stream
//     (acked once stored by a majority); each host consumes the stream into
//     its own bbolt journal (a committed, synced write per result per host,
//     as the daemon's journal writes) and reads it from there.
//
// Per result, "record" is the time until it is stored durably and, for the
// stream, until all three hosts' journals have it (reported apart as
// µs/all-hosts, beside µs/pub-ack: the publish alone); "get" is one read of a
// proof by a host other than the one that stored it. The record-16 runs
// record 16 results at once (ns/op is then the time per result with 16 in
// flight: the inverse of the rate).
func BenchmarkResultsStore(b *testing.B) {
	urls := startServers(b, 3)
	hosts := make([]*Cluster, 3)
	for i := range hosts {
		hosts[i] = member(b, urls[i:i+1], fmt.Sprintf("h%d", i), 3)
	}
	ctx := context.Background()
	result, _ := json.Marshal(proofRecord{Proof: make([]byte, 400), Public: make([]byte, 76), Host: "h0", Device: "gpu0", Attempts: 1, At: time.Now()})

	b.Run("kv/record", func(b *testing.B) {
		rec := createJob(b, hosts[0], b.N, api.ClassNormal)
		b.ResetTimer()
		for i := range b.N {
			if err := hosts[i%3].recordProof(ctx, rec.ID, i, proofRecord{Proof: make([]byte, 400), Public: make([]byte, 76), Host: "h0"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// 16 results at once, as many hosts finish partitions of one job: each
	// Update of the job record that loses the compare-and-set reads again.
	b.Run("kv/record-16", func(b *testing.B) {
		rec := createJob(b, hosts[0], b.N, api.ClassNormal)
		var next, failed atomic.Int64
		b.SetParallelism(8) // × GOMAXPROCS goroutines
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := int(next.Add(1) - 1)
				// A host retries a record that failed (recordProofPatiently,
				// after 250ms): here at once, and counted.
				for try := 0; ; try++ {
					err := hosts[i%3].recordProof(ctx, rec.ID, i, proofRecord{Proof: make([]byte, 400), Public: make([]byte, 76), Host: "h0"})
					if err == nil {
						break
					}
					failed.Add(1)
					if try == 5 {
						b.Error(err)
						return
					}
				}
			}
		})
		b.ReportMetric(float64(failed.Load()), "failed-records")
	})
	b.Run("kv/get", func(b *testing.B) {
		rec := createJob(b, hosts[0], 1, api.ClassNormal)
		if err := hosts[0].recordProof(ctx, rec.ID, 0, proofRecord{Proof: make([]byte, 400), Host: "h0"}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, err := hosts[1].get(ctx, proofKey(rec.ID, 0)); err != nil {
				b.Fatal(err)
			}
		}
	})

	// The results stream and each host's journal.
	rs := newResultsStream(b, hosts)
	b.Run("stream/record", func(b *testing.B) {
		job, _ := journal.NewID()
		var pubAck, all time.Duration
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			key := job + "." + strconv.Itoa(i)
			if _, err := hosts[i%3].js.Publish(ctx, "zkhost.result."+key, result, jetstream.WithMsgID(key)); err != nil {
				b.Fatal(err)
			}
			pubAck += time.Since(start)
			for _, j := range rs.journals {
				j.wait(b, key)
			}
			all += time.Since(start)
		}
		b.ReportMetric(float64(pubAck.Microseconds())/float64(b.N), "µs/pub-ack")
		b.ReportMetric(float64(all.Microseconds())/float64(b.N), "µs/all-hosts")
	})
	b.Run("stream/record-16", func(b *testing.B) {
		job, _ := journal.NewID()
		var next atomic.Int64
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := int(next.Add(1) - 1)
				key := job + "." + strconv.Itoa(i)
				if _, err := hosts[i%3].js.Publish(ctx, "zkhost.result."+key, result, jetstream.WithMsgID(key)); err != nil {
					b.Error(err)
					return
				}
				for _, j := range rs.journals {
					j.wait(b, key)
				}
			}
		})
	})
	b.Run("stream/get", func(b *testing.B) {
		job, _ := journal.NewID()
		key := job + ".0"
		if _, err := hosts[0].js.Publish(ctx, "zkhost.result."+key, result, jetstream.WithMsgID(key)); err != nil {
			b.Fatal(err)
		}
		j := rs.journals[1]
		j.wait(b, key)
		b.ResetTimer()
		for range b.N {
			if v := j.get(key); len(v) != len(result) {
				b.Fatalf("read %d bytes", len(v))
			}
		}
	})
	rs.stop()
}

// resultsStream is the alternative results store of BenchmarkResultsStore: a
// stream of results, consumed by each host into its own bbolt journal.
type resultsStream struct {
	journals []*benchJournal
	stops    []func()
}

func newResultsStream(b *testing.B, hosts []*Cluster) *resultsStream {
	ctx := context.Background()
	_, err := hosts[0].js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: "ZKHOST_RESULTS_BENCH", Subjects: []string{"zkhost.result.>"}, Storage: jetstream.FileStorage,
		Replicas: 3, Duplicates: 2 * time.Minute,
	})
	if err != nil {
		b.Fatal(err)
	}
	rs := &resultsStream{}
	for i, h := range hosts {
		db, err := bolt.Open(filepath.Join(b.TempDir(), "journal.db"), 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		j := &benchJournal{db: db, have: map[string]chan struct{}{}, queue: make(chan benchWrite, 1024), done: make(chan struct{})}
		go j.write(b)
		cons, err := h.js.CreateOrUpdateConsumer(ctx, "ZKHOST_RESULTS_BENCH", jetstream.ConsumerConfig{
			Durable: fmt.Sprintf("results-h%d", i), AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3,
		})
		if err != nil {
			b.Fatal(err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) {
			j.queue <- benchWrite{strings.TrimPrefix(m.Subject(), "zkhost.result."), m.Data(), m}
		})
		if err != nil {
			b.Fatal(err)
		}
		rs.journals = append(rs.journals, j)
		rs.stops = append(rs.stops, func() {
			cc.Stop()
			close(j.queue)
			<-j.done
			db.Close()
		})
	}
	return rs
}

func (rs *resultsStream) stop() {
	for _, s := range rs.stops {
		s()
	}
}

// benchJournal is a host's journal of results: a bbolt file written by group
// commit, as the daemon's journal is (host/journal): a write made while a
// commit runs joins the next, every commit synced; a result is acked to the
// stream once committed.
type benchJournal struct {
	db    *bolt.DB
	queue chan benchWrite
	done  chan struct{}
	mu    sync.Mutex
	have  map[string]chan struct{} // closed once the key is committed
}

type benchWrite struct {
	key string
	val []byte
	msg jetstream.Msg
}

var resultsBucket = []byte("results")

// write commits what is queued, in groups, until the queue is closed.
func (j *benchJournal) write(b *testing.B) {
	defer close(j.done)
	for w := range j.queue {
		group := []benchWrite{w}
	more:
		for {
			select {
			case w, ok := <-j.queue:
				if !ok {
					break more
				}
				group = append(group, w)
			default:
				break more
			}
		}
		err := j.db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists(resultsBucket)
			if err != nil {
				return err
			}
			for _, w := range group {
				if err := bk.Put([]byte(w.key), w.val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Error(err)
			continue
		}
		for _, w := range group {
			w.msg.Ack()
			// Closed once: a redelivered result is written again, harmlessly.
			c := j.ch(w.key)
			select {
			case <-c:
			default:
				close(c)
			}
		}
	}
}

func (j *benchJournal) ch(key string) chan struct{} {
	j.mu.Lock()
	defer j.mu.Unlock()
	c, ok := j.have[key]
	if !ok {
		c = make(chan struct{})
		j.have[key] = c
	}
	return c
}

// wait waits until key is in the journal.
func (j *benchJournal) wait(b *testing.B, key string) {
	select {
	case <-j.ch(key):
	case <-time.After(time.Minute):
		b.Errorf("result %s not in a host's journal after a minute", key)
	}
}

func (j *benchJournal) get(key string) []byte {
	var out []byte
	j.db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket(resultsBucket); bk != nil {
			out = bytes.Clone(bk.Get([]byte(key)))
		}
		return nil
	})
	return out
}

// BenchmarkInputPath is what a partition's input costs on its way from the
// submitting host to the proving host, on three servers (replicas 3): queued
// and pulled, inside its message (inline, up to inline_max) or through the
// object store (stored, referenced, read back and checked). 4 MiB goes both
// ways, for the peer figure; 64 MiB only through the object store.
func BenchmarkInputPath(b *testing.B) {
	urls := startServers(b, 3)
	a, p := member(b, urls[:1], "h0", 3), member(b, urls[1:2], "h1", 3)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		size   int
		object bool
	}{
		{"inline/4MiB", 4 << 20, false},
		{"object/4MiB", 4 << 20, true},
		{"object/64MiB", 64 << 20, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			in := make([]byte, tc.size)
			for i := range in {
				in[i] = byte(i * 7)
			}
			a.cfg.InlineMax = uint64(tc.size)
			if tc.object {
				a.cfg.InlineMax = 1 << 20
			}
			b.SetBytes(int64(tc.size))
			b.ResetTimer()
			for range b.N {
				rec := createJob(b, a, 1, api.ClassNormal)
				rec.markObjects([][]byte{in}, a.inlineMax())
				if rec.inObject(0) != tc.object {
					b.Fatalf("in object: %v", rec.inObject(0))
				}
				if err := a.publish(ctx, rec, [][]byte{in}, false); err != nil {
					b.Fatal(err)
				}
				m := p.next(ctx, p.cons[:])
				got, err := p.readInput(ctx, m, rec.ID, 0)
				if err != nil || len(got) != len(in) {
					b.Fatalf("read %d bytes: %v", len(got), err)
				}
				m.Ack()
				if tc.object {
					p.dropInputs(ctx, rec)
				}
			}
		})
	}
}
