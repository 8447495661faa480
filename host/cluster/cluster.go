package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/config"
)

// Cluster is one host's member of a proving cluster. It serves the API
// (api.Service) from the shared bucket and, in Run, pulls partitions for its
// local daemon to prove.
type Cluster struct {
	cfg   *config.Cluster
	log   hclog.Logger
	local api.Service // this host's daemon

	srv *server.Server // the embedded server, or nil
	// n are the names of this cluster's things in NATS (names.go).
	n    names
	conn *connState // the NATS connection's state (conn.go)
	nc   *nats.Conn
	js   jetstream.JetStream
	kv   jetstream.KeyValue
	cons [4]jetstream.Consumer // by api.Classes order
	// ready are the consumers of synthesized partitions (synthesis.go), by
	// api.Classes order.
	ready [4]jetstream.Consumer
	// stream is the partitions' stream, for purging an ended job's.
	stream jetstream.Stream

	// inputs holds the inputs too large for a partition message (inputs.go).
	inputs jetstream.ObjectStore
	// peers is the other hosts' presence, for key affinity (affinity.go).
	peers        *peers
	presenceSubs []*nats.Subscription
	circuits     []string // the names of the circuits this host serves

	// wake is signalled when a job's partitions are queued anywhere (an empty
	// message on wakeSubject), so an idle puller asks at once instead of at
	// its next poll.
	wake    chan struct{}
	wakeSub *nats.Subscription

	// held are the reply subjects of the partitions this host holds, by
	// stream sequence, announced so that a live host hands them back if this
	// one falls silent (affinity.go, reap).
	heldMu sync.Mutex
	held   map[uint64]string

	// synthStats count a synthesis host's work (synthesis.go).
	synthStats synthCounters

	closeOnce sync.Once
}

// Start joins the cluster of cfg.Cluster: it starts the embedded NATS server
// when configured, connects, and creates the stream, consumers and bucket if
// they do not exist yet (waiting, within ctx, for JetStream to elect a leader).
// local is this host's daemon, which proves what the host pulls; nil for a
// synthesis host, which runs RunSynthesis instead of Run and serves no API.
func Start(ctx context.Context, cfg *config.Config, local api.Service, log hclog.Logger) (_ *Cluster, err error) {
	cc := cfg.Cluster
	if cc == nil {
		return nil, errors.New("cluster: no [cluster] in the config")
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	c := &Cluster{cfg: cc, log: log, local: local, wake: make(chan struct{}, 1), peers: newPeers(cc.Name),
		n: newNames(cc.Prefix), conn: newConnState(), held: map[uint64]string{}}
	for _, ci := range cfg.Circuits {
		c.circuits = append(c.circuits, ci.Name)
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if cc.Embedded {
		if c.srv, err = startServer(cc, log.Named("nats")); err != nil {
			return nil, err
		}
	}
	if c.nc, err = connect(cc, c.srv, log, c.conn); err != nil {
		return nil, err
	}
	// An async publish whose ack was lost (publish waits requestTimeout, then
	// publishes again) is forgotten after a minute, with its message.
	if c.js, err = jetstream.New(c.nc, jetstream.WithPublishAsyncTimeout(time.Minute)); err != nil {
		return nil, err
	}
	h, err := setup(ctx, c.js, cc, c.n, cfg.Journal.Retention, c.conn, log)
	if err != nil {
		return nil, err
	}
	c.stream, c.cons, c.ready, c.kv, c.inputs = h.stream, h.cons, h.ready, h.kv, h.inputs
	if c.wakeSub, err = c.nc.Subscribe(c.n.wake, func(*nats.Msg) { c.signal() }); err != nil {
		return nil, err
	}
	if err = c.listenPresence(); err != nil {
		return nil, err
	}
	if err = c.nc.Flush(); err != nil { // the subscriptions are in place
		return nil, err
	}
	servers := redactURLs(cc.URLs)
	if c.srv != nil && len(cc.URLs) == 0 {
		servers = []string{c.srv.ClientURL()} // where it listens, not nats.go's default URL
	}
	log.Info("joined the proving cluster", "host", cc.Name, "prefix", c.n.prefix, "replicas", cc.Replicas,
		"ack_wait", cc.AckWait, "embedded", cc.Embedded, "servers", servers)
	return c, nil
}

func (c *Cluster) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Close leaves the cluster: it drains the connection (acks in flight reach the
// server) and stops the embedded server.
func (c *Cluster) Close() {
	c.closeOnce.Do(func() {
		c.conn.close()
		if c.wakeSub != nil {
			c.wakeSub.Unsubscribe()
		}
		for _, sub := range c.presenceSubs {
			sub.Unsubscribe()
		}
		if c.nc != nil {
			c.nc.Drain()
			for i := 0; i < 100 && !c.nc.IsClosed(); i++ {
				time.Sleep(20 * time.Millisecond)
			}
			c.nc.Close()
		}
		if c.srv != nil {
			c.srv.Shutdown()
			c.srv.WaitForShutdown()
		}
	})
}

// getJob reads a job record and its revision, as getRev reads keys (a key
// not found is read again from the leader before the job is unknown).
func (c *Cluster) getJob(ctx context.Context, id string) (*jobRecord, uint64, error) {
	data, rev, err := c.getRev(ctx, jobKey(id))
	if err != nil {
		if errors.Is(err, errNotFound) {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("reading job %s: %w", id, err)
	}
	r, err := decodeJob(data)
	return r, rev, err
}

// updateJob changes a job record by compare-and-set: change is applied to the
// latest record until an update on its revision succeeds, so concurrent
// writers on any host never lose each other's changes. change returns false
// to leave the record as it is. It returns the record as written (or as
// found).
func (c *Cluster) updateJob(ctx context.Context, id string, change func(r *jobRecord) bool) (*jobRecord, error) {
	var r *jobRecord
	_, err := c.casKey(ctx, jobKey(id), func(old []byte, found bool) ([]byte, bool, error) {
		if !found {
			return nil, false, errNotFound
		}
		var err error
		if r, err = decodeJob(old); err != nil {
			return nil, false, err
		}
		if !change(r) {
			return nil, false, nil
		}
		b, err := json.Marshal(r)
		return b, true, err
	})
	if err != nil {
		return nil, fmt.Errorf("updating job %s: %w", id, err)
	}
	return r, nil
}

// casKey changes key's value by compare-and-set: change gets the latest value
// (found false when there is none) and returns the new one, or false to leave
// it, until a write on the revision read succeeds. A write lost to another
// writer is retried without bound, any other failure up to 20 times; a
// retried write whose first attempt went through (its reply lost) fails on
// the revision it moved, and the next read finds the change made.
func (c *Cluster) casKey(ctx context.Context, key string, change func(old []byte, found bool) ([]byte, bool, error)) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		old, rev, err := c.getRev(ctx, key)
		found := err == nil
		if err != nil && !errors.Is(err, errNotFound) {
			return nil, err
		}
		val, write, err := change(old, found)
		if err != nil || !write {
			return old, err
		}
		err = c.request(ctx, func(ctx context.Context) (err error) {
			if found {
				_, err = c.kv.Update(ctx, key, val, rev)
			} else {
				_, err = c.kv.Create(ctx, key, val)
			}
			return err
		})
		if err == nil {
			return val, nil
		}
		if !casConflict(err) && attempt >= 20 {
			return nil, err
		}
		// Another writer won, or a replica lagged: read again.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(min(attempt+1, 20)) * 5 * time.Millisecond):
		}
	}
}

// casConflict reports whether a compare-and-set lost to another writer: a
// job with many partitions finishing at once loses many in a row, and each
// loss is retried, never counted as a failure. A replicated bucket reports
// the conflict as ErrKeyRevisionMismatch (error code 10164), a single
// replica as ErrKeyExists (10071); nats.go maps both to the first.
func casConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)
}

// recordProof stores partition idx's verified proof, once, and marks it in
// the job record; the update that marks the last partition ends the job. A
// partition proved twice (a redelivery race) finds its proof stored and
// changes nothing.
func (c *Cluster) recordProof(ctx context.Context, id string, idx int, pr proofRecord) error {
	b, err := json.Marshal(pr)
	if err != nil {
		return err
	}
	err = c.request(ctx, func(ctx context.Context) error {
		_, err := c.kv.Create(ctx, proofKey(id, idx), b)
		return err
	})
	if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("storing proof of job %s partition %d: %w", id, idx, err)
	}
	return c.markVerified(ctx, id, idx)
}

// markVerified sets partition idx's bit in the job record, and ends the job
// when it was the last (and deletes its input objects).
func (c *Cluster) markVerified(ctx context.Context, id string, idx int) error {
	done := false
	r, err := c.updateJob(ctx, id, func(r *jobRecord) bool {
		done = false // an attempt whose update lost does not count
		if r.state().Terminal() || r.verified(idx) || idx >= r.Partitions {
			return false
		}
		r.setVerified(idx)
		now := time.Now()
		if r.Started.IsZero() {
			r.Started = now
		}
		r.State = api.JobRunning.String()
		if r.countVerified() == r.Partitions {
			r.State, r.Finished = api.JobDone.String(), now
			done = true
		}
		return true
	})
	if err == nil && done {
		c.dropInputs(ctx, r)
	}
	return err
}

// endJob moves a job that has not ended to state with reason, and deletes its
// input objects; it returns the job's record as it now stands and whether
// this call ended it.
func (c *Cluster) endJob(ctx context.Context, id string, state api.JobState, reason string) (*jobRecord, bool, error) {
	ended := false
	r, err := c.updateJob(ctx, id, func(r *jobRecord) bool {
		ended = false // an attempt whose update lost does not count
		if r.state().Terminal() {
			return false
		}
		r.State, r.Error, r.Finished = state.String(), reason, time.Now()
		ended = true
		return true
	})
	if err == nil && ended && state != api.JobDone {
		// Its waiting partitions (two subjects: its class's, to synthesize
		// and synthesized) go at once; those held by hosts see the ended
		// job and drop theirs. A purge lost with a NATS server costs only
		// their deliveries.
		for _, subject := range []string{c.n.partSubject(r.Class, id), c.n.readySubject(r.Class, id)} {
			c.request(ctx, func(ctx context.Context) error {
				return c.stream.Purge(ctx, jetstream.WithPurgeSubject(subject))
			})
		}
	}
	if err == nil && ended {
		c.dropInputs(ctx, r)
	}
	return r, ended, err
}

// proofs reads a job's stored proofs into job's partitions, a few at a time.
func (c *Cluster) proofs(ctx context.Context, job *api.Job) error {
	var g errgroup.Group
	g.SetLimit(8)
	for i := range job.Partitions {
		g.Go(func() error {
			b, err := c.get(ctx, proofKey(job.ID, i))
			if err != nil {
				return fmt.Errorf("reading the proof of job %s partition %d: %w", job.ID, i, err)
			}
			var pr proofRecord
			if err := json.Unmarshal(b, &pr); err != nil {
				return fmt.Errorf("proof of job %s partition %d: %w", job.ID, i, err)
			}
			p := &job.Partitions[i]
			p.Proof, p.PublicWitness, p.Device, p.Attempts, p.VerifiedAt = pr.Proof, pr.Public, pr.Host+"/"+pr.Device, pr.Attempts, pr.At
			p.ProveStart, p.ProveEnd = pr.ProveStart, pr.ProveEnd
			return nil
		})
	}
	return g.Wait()
}

// get reads key: from any replica, and from the leader when a replica does
// not have it (yet).
func (c *Cluster) get(ctx context.Context, key string) ([]byte, error) {
	b, _, err := c.getRev(ctx, key)
	return b, err
}

// getRev is get with the value's revision: a direct get, answered by any
// replica, and the leader's answer when that one has not the key (a replica
// may lag behind a write another host just made).
func (c *Cluster) getRev(ctx context.Context, key string) ([]byte, uint64, error) {
	var e jetstream.KeyValueEntry
	err := c.request(ctx, func(ctx context.Context) (err error) {
		e, err = c.kv.Get(ctx, key)
		return err
	})
	if err == nil {
		return e.Value(), e.Revision(), nil
	}
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, err
	}
	return c.leaderGet(ctx, key)
}

// leaderGet reads key's latest value from the bucket stream's leader (the
// STREAM.MSG.GET API, which only the leader answers), never from a replica.
// A deleted or absent key is errNotFound.
func (c *Cluster) leaderGet(ctx context.Context, key string) ([]byte, uint64, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": c.n.kvSubject(key)})
	// Only the leader answers: between two leaders nobody does, so the
	// request is retried until one is elected.
	var m *nats.Msg
	err := c.request(ctx, func(ctx context.Context) (err error) {
		m, err = c.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+c.n.kvStream(), req)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", key, err)
	}
	var resp struct {
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
		Message *struct {
			Seq  uint64 `json:"seq"`
			Hdrs []byte `json:"hdrs"`
			Data []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", key, err)
	}
	if resp.Error != nil {
		if resp.Error.Code == 404 {
			return nil, 0, errNotFound
		}
		return nil, 0, fmt.Errorf("reading %s: %s", key, resp.Error.Description)
	}
	if resp.Message == nil || bytes.Contains(resp.Message.Hdrs, []byte("KV-Operation")) {
		return nil, 0, errNotFound // deleted or purged
	}
	return resp.Message.Data, resp.Message.Seq, nil
}
