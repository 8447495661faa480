package cluster

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/journal"
	"github.com/zkhost/zkhost/host/metrics"
)

// The Cluster serves the API: jobs from the bucket, so every host answers
// the same; the machine's own state (Status, keys, devices) from the local
// daemon.
var _ api.Service = (*Cluster)(nil)

// submitGrace is how long a reconnection may take before Submit refuses at
// once (saying why) instead of trying its requests.
const submitGrace = 2 * time.Second

// Submit implements api.Service: the local daemon checks the job as it would
// its own, then the job is recorded in the bucket and its partitions queued.
func (c *Cluster) Submit(ctx context.Context, req api.SubmitRequest) (api.Job, error) {
	inputs, noun := req.Inputs()
	h := api.SubmitHeader{Circuit: req.Circuit, Class: req.Class, RequestID: req.RequestID, Assignments: len(req.Assignments) > 0}
	for _, in := range inputs {
		h.InputSizes = append(h.InputSizes, int64(len(in)))
	}
	if err := c.CheckSubmit(ctx, h); err != nil {
		return api.Job{}, err
	}
	if err := c.conn.usable(submitGrace); err != nil {
		return api.Job{}, api.Unavailablef("cluster: %v", err)
	}
	req.Class = req.Class.OrNormal()
	owner := api.IdentityFrom(ctx).Name
	digest := req.Digest()
	id, err := journal.NewID() // the same ids as a lone daemon's
	if err != nil {
		return api.Job{}, err
	}
	if req.RequestID != "" {
		rr, _ := json.Marshal(reqRecord{JobID: id, Digest: hex.EncodeToString(digest[:])})
		err := c.request(ctx, func(ctx context.Context) error {
			_, err := c.kv.Create(ctx, reqKey(owner, req.RequestID), rr)
			return err
		})
		if errors.Is(err, jetstream.ErrKeyExists) {
			var prev reqRecord
			e, gerr := c.get(ctx, reqKey(owner, req.RequestID))
			if gerr != nil || json.Unmarshal(e, &prev) != nil {
				return api.Job{}, api.Unavailablef("request id %q: reading the job it names: %v", req.RequestID, gerr)
			}
			if prev.Digest != hex.EncodeToString(digest[:]) {
				return api.Job{}, api.Conflictf("request id %q already names job %s, submitted with other content", req.RequestID, prev.JobID)
			}
			id = prev.JobID
		} else if err != nil {
			return api.Job{}, api.Unavailablef("cluster: recording request id: %v", err)
		}
	}
	rec := newJobRecord(id, req, owner, c.cfg.Name)
	rec.markObjects(inputs, c.inlineMax())
	b, _ := json.Marshal(rec)
	err = c.request(ctx, func(ctx context.Context) error {
		_, err := c.kv.Create(ctx, jobKey(id), b)
		return err
	})
	if errors.Is(err, jetstream.ErrKeyExists) {
		// A retried request: the job exists; queue again what it lacks, in
		// case the host that took it died before queueing every partition
		// (JetStream drops the copies it already has, by message id).
		if rec, _, err = c.getJob(ctx, id); err != nil {
			return api.Job{}, api.Unavailablef("cluster: %v", err)
		}
	} else if err != nil {
		return api.Job{}, api.Unavailablef("cluster: recording job: %v", err)
	}
	if !rec.state().Terminal() {
		if err := c.publish(ctx, rec, inputs, h.Assignments); err != nil {
			return api.Job{}, err
		}
	}
	c.log.Info("job accepted", "job", id, "circuit", rec.Circuit, "class", rec.Class, "partitions", rec.Partitions, "input", noun)
	return rec.view(), nil
}

// publish queues the job's partitions not yet verified, and waits until
// JetStream has stored every one. An input marked in rec.Objects is stored
// in the object store first (inputs.go), and its message names it.
func (c *Cluster) publish(ctx context.Context, rec *jobRecord, inputs [][]byte, assignments bool) error {
	var futures []jetstream.PubAckFuture
	for i, in := range inputs {
		if rec.verified(i) {
			continue
		}
		// An assignment is solved already: it goes with the synthesized
		// partitions, which no synthesis host pulls.
		subject := c.n.partSubject(rec.Class, rec.ID)
		if assignments {
			subject = c.n.readySubject(rec.Class, rec.ID)
		}
		m := nats.NewMsg(subject)
		m.Header.Set(jetstream.MsgIDHeader, rec.ID+"."+strconv.Itoa(i))
		m.Header.Set(hdrPartition, strconv.Itoa(i))
		if assignments {
			m.Header.Set(hdrInput, inputAssign)
		}
		if rec.inObject(i) {
			if err := c.putInput(ctx, m, inputName(rec.ID, i), rec.ID, i, in); err != nil {
				return api.Unavailablef("cluster: %v (submit again with the same request id to finish queueing it)", err)
			}
		} else {
			m.Data = in
		}
		f, err := c.js.PublishMsgAsync(m)
		if err != nil {
			return api.Unavailablef("cluster: queueing partition %d of job %s: %v", i, rec.ID, err)
		}
		futures = append(futures, f)
	}
	lost := false // an ack did not come: the stream was between two leaders
	for _, f := range futures {
		wait := requestTimeout
		if lost {
			wait = 0 // an ack not here by now was lost too
		}
		var err error
		select {
		case <-f.Ok():
			continue
		case err = <-f.Err():
		case <-time.After(wait):
			lost, err = true, jetstream.ErrAsyncPublishTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
		if transient(err) {
			// Publish it again and wait for its ack: JetStream drops a
			// second copy of a message it stored, by its message id.
			err = c.request(ctx, func(ctx context.Context) error {
				_, err := c.js.PublishMsg(ctx, f.Msg())
				return err
			})
		}
		if err != nil {
			return api.Unavailablef("cluster: queueing a partition of job %s: %v (submit again with the same request id to finish queueing it)", rec.ID, err)
		}
	}
	// Wake the idle pullers of every host (a lost wake-up costs a poll).
	c.nc.Publish(c.n.wake, nil)
	return nil
}

// CheckSubmit implements api.Service: the local daemon's checks. An input of
// any size travels (inputs.go).
func (c *Cluster) CheckSubmit(ctx context.Context, h api.SubmitHeader) error {
	return c.local.CheckSubmit(ctx, h)
}

// AdmitStream implements api.Service: a streamed job's inputs are buffered on
// this host before they are queued, so this host's daemon counts them in its
// memory budget.
func (c *Cluster) AdmitStream(ctx context.Context, h api.SubmitHeader) (func(), error) {
	return c.local.AdmitStream(ctx, h)
}

// visibleJob reads job id for the caller of ctx: a job of another client is,
// to a client that is not an admin, a job that does not exist.
func (c *Cluster) visibleJob(ctx context.Context, id string) (*jobRecord, error) {
	r, _, err := c.getJob(ctx, id)
	if errors.Is(err, errNotFound) {
		return nil, api.NotFoundf("no job %q", id)
	}
	if err != nil {
		return nil, api.Unavailablef("cluster: %v", err)
	}
	if who := api.IdentityFrom(ctx); !who.Admin && r.Owner != who.Name {
		return nil, api.NotFoundf("no job %q", id)
	}
	return r, nil
}

// Get implements api.Service.
func (c *Cluster) Get(ctx context.Context, id string) (api.Job, error) {
	r, err := c.visibleJob(ctx, id)
	if err != nil {
		return api.Job{}, err
	}
	return c.final(ctx, r)
}

// final is the view of r with its proofs when it is done.
func (c *Cluster) final(ctx context.Context, r *jobRecord) (api.Job, error) {
	j := r.view()
	if j.State == api.JobDone {
		if err := c.proofs(ctx, &j); err != nil {
			return api.Job{}, api.Unavailablef("cluster: %v", err)
		}
	}
	return j, nil
}

// awaitPoll is how often Await reads the job when no update woke it: updates
// wake it at once, this only bounds a missed one.
const awaitPoll = 2 * time.Second

// Await implements api.Service: a snapshot, one EventPartitionVerified per
// partition recorded, and the terminal event. It reads the job record on
// every write to it (a plain NATS subscription to the record's subject wakes
// it) and every awaitPoll; it does not hold a JetStream consumer, so the loss
// of a NATS server (a leader elected again) costs a few retried reads, not
// the stream.
func (c *Cluster) Await(ctx context.Context, id string, send func(api.JobEvent) error) error {
	r, err := c.visibleJob(ctx, id)
	if err != nil {
		return err
	}
	woken := make(chan struct{}, 1)
	sub, err := c.nc.Subscribe(c.n.kvSubject(jobKey(id)), func(*nats.Msg) {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return api.Unavailablef("cluster: watching job %s: %v", id, err)
	}
	defer sub.Unsubscribe()
	// Read again now that the subscription is in place: no write is missed.
	if again, _, err := c.getJob(ctx, id); err == nil && again.countVerified() >= r.countVerified() {
		r = again
	}
	snap := r.view()
	if err := send(api.JobEvent{JobID: id, Kind: api.EventSnapshot, Time: time.Now(), Job: &snap}); err != nil {
		return err
	}
	last := r
	for {
		if last.state().Terminal() {
			final, err := c.finalPatiently(ctx, last)
			if err != nil {
				return err
			}
			return send(api.JobEvent{JobID: id, Kind: final.State.EndEvent(), Time: time.Now(), Reason: last.Error, Job: &final})
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-woken:
		case <-time.After(awaitPoll):
		}
		r, _, err := c.getJob(ctx, id)
		if err != nil {
			if errors.Is(err, errNotFound) {
				return api.NotFoundf("job %s was removed (past retention)", id)
			}
			c.log.Debug("reading an awaited job; trying again", "job", id, "error", err)
			continue
		}
		// A lagging replica may answer with an older record: only forward.
		if r.countVerified() < last.countVerified() || (last.state().Terminal() && !r.state().Terminal()) {
			continue
		}
		now := time.Now()
		for i := range r.Partitions {
			if r.verified(i) && !last.verified(i) {
				if err := send(api.JobEvent{JobID: id, Kind: api.EventPartitionVerified, Time: now, Partition: i}); err != nil {
					return err
				}
			}
		}
		last = r
	}
}

// finalPatiently is final, retried while NATS recovers.
func (c *Cluster) finalPatiently(ctx context.Context, r *jobRecord) (api.Job, error) {
	for {
		j, err := c.final(ctx, r)
		if err == nil || ctx.Err() != nil {
			return j, err
		}
		c.log.Debug("reading a job's proofs; trying again", "job", r.ID, "error", err)
		select {
		case <-ctx.Done():
			return api.Job{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Cancel implements api.Service.
func (c *Cluster) Cancel(ctx context.Context, id string) (api.Job, error) {
	if _, err := c.visibleJob(ctx, id); err != nil {
		return api.Job{}, err
	}
	r, _, err := c.endJob(ctx, id, api.JobCancelled, "cancelled by a client")
	if err != nil {
		return api.Job{}, api.Unavailablef("cluster: %v", err)
	}
	return c.final(ctx, r)
}

// listTimeout bounds one List.
const listTimeout = 30 * time.Second

// List implements api.Service over every job record in the bucket.
func (c *Cluster) List(ctx context.Context, f api.ListFilter) ([]api.Job, error) {
	// The watch is a JetStream consumer: bound it, so a NATS server lost
	// meanwhile makes this an error to retry, not a hang.
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	w, err := c.kv.Watch(ctx, jobKey("*"), jetstream.IgnoreDeletes())
	if err != nil {
		return nil, api.Unavailablef("cluster: listing jobs: %v", err)
	}
	defer w.Stop()
	who := api.IdentityFrom(ctx)
	var recs []*jobRecord
	for e := range w.Updates() {
		if e == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, api.Unavailablef("cluster: listing jobs: %v", ctx.Err())
		}
		r, err := decodeJob(e.Value())
		if err != nil || (!who.Admin && r.Owner != who.Name) {
			continue
		}
		if f.State != api.JobStateUnspecified && r.state() != f.State {
			continue
		}
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b *jobRecord) int { return b.Created.Compare(a.Created) })
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	out := make([]api.Job, 0, min(limit, len(recs)))
	for _, r := range recs[:min(limit, len(recs))] {
		out = append(out, r.view())
	}
	return out, nil
}

// Status implements api.Service: this host's own queues, devices and budget,
// and the cluster as this host sees it (ClusterStatus). A cluster whose
// queue cannot be read now (NATS unreachable) still reports the host, its
// connection and the hosts it heard, saying why the queue is missing.
func (c *Cluster) Status(ctx context.Context) (api.StatusReport, error) {
	st, err := c.local.Status(ctx)
	if err != nil {
		return st, err
	}
	cs := c.ClusterStatus(ctx)
	st.Cluster = &cs
	return st, nil
}

// statusTimeout bounds the reads of the queue for one status.
const statusTimeout = 2 * time.Second

// ClusterStatus is the cluster as this host sees it: its NATS connection,
// every host heard, and the queue per class (one request per consumer, the
// synthesized partitions' included, and one for the stream).
func (c *Cluster) ClusterStatus(ctx context.Context) api.ClusterStatus {
	conn := c.conn.status()
	cs := api.ClusterStatus{
		Host: c.cfg.Name, Prefix: c.n.prefix,
		Connection: api.ClusterConnection{State: conn.State, Since: conn.Since, Server: conn.Server,
			LastError: conn.LastError, LastErrorAt: conn.LastErrAt, Reconnects: conn.Reconnects},
		Hosts: c.peers.hosts(time.Now()),
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	for i, cons := range c.cons {
		info, err := cons.Info(ctx)
		if err != nil {
			cs.Queues, cs.QueueError = nil, fmt.Sprintf("consumer %s: %v", c.n.consumer(api.Classes[i]), err)
			return cs
		}
		ready, err := c.ready[i].Info(ctx)
		if err != nil {
			cs.Queues, cs.QueueError = nil, fmt.Sprintf("consumer %s: %v", c.n.readyConsumer(api.Classes[i]), err)
			return cs
		}
		cs.Queues = append(cs.Queues, api.ClusterQueue{Class: api.Classes[i], Waiting: info.NumPending,
			Held: uint64(info.NumAckPending), Redelivered: uint64(info.NumRedelivered), Synthesized: ready.NumPending})
	}
	info, err := c.stream.Info(ctx)
	if err != nil {
		cs.QueueError = fmt.Sprintf("stream %s: %v", c.n.stream, err)
		return cs
	}
	if info.State.Msgs > 0 {
		cs.Oldest = info.State.FirstTime
	}
	return cs
}

// PreloadKey implements api.Service on this host's devices.
func (c *Cluster) PreloadKey(ctx context.Context, circuit, device string) ([]string, error) {
	return c.local.PreloadKey(ctx, circuit, device)
}

// EvictKey implements api.Service on this host's devices.
func (c *Cluster) EvictKey(ctx context.Context, circuit, device string) ([]string, error) {
	return c.local.EvictKey(ctx, circuit, device)
}

// EnableDevice implements api.Service on this host's devices.
func (c *Cluster) EnableDevice(ctx context.Context, device string) (api.DeviceStatus, error) {
	return c.local.EnableDevice(ctx, device)
}

// Metrics passes on the local daemon's metrics (as web.MetricsProvider asks):
// /metrics and the status page, served over the cluster, keep the devices'
// proving times and busy history.
func (c *Cluster) Metrics() *metrics.Metrics {
	if mp, ok := c.local.(interface{ Metrics() *metrics.Metrics }); ok {
		return mp.Metrics()
	}
	return nil
}
