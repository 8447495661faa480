package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zkhost/zkhost/host/api"
)

// pollInterval is how often an idle puller asks the consumers without being
// woken: redeliveries (a dead host's partitions) wake nobody.
const pollInterval = time.Second

// Run pulls partitions for this host's daemon until ctx ends, or until the
// NATS connection fails for good (it closed, or its credentials changed in a
// way it cannot follow): then it returns why, and zkhost serve exits non-zero
// for its supervisor to start it again, rather than live on refusing all
// work. The host holds
// at most Pull partitions (by default its device slots plus its synthesis
// workers: enough to keep every device fed, no more), and asks the consumers
// in priority order whenever one of them is free.
func (c *Cluster) Run(ctx context.Context) error {
	c.handBackHeld()
	c.cancelLeftovers(ctx)
	slots := c.cfg.Pull
	if slots <= 0 {
		slots = 1
		if st, err := c.local.Status(ctx); err == nil {
			n := st.SynthesisCapacity
			for _, d := range st.Devices {
				n += d.MaxInFlight
			}
			slots = max(1, n)
		}
	}
	// Synthesized partitions first within each class: they need no
	// synthesis here, and their synthesis host has done its part.
	var order []jetstream.Consumer
	for i := range c.cons {
		order = append(order, c.ready[i], c.cons[i])
	}
	c.log.Info("pulling partitions", "host", c.cfg.Name, "at_once", slots)
	return c.pull(ctx, slots, func(ctx context.Context) jetstream.Msg { return c.next(ctx, order) }, c.handle)
}

// pull holds at most slots partitions at once: it takes the next from next
// whenever one of them is free and gives it to handle, until ctx ends or the
// NATS connection fails for good (then it returns why). It announces this
// host's presence and room meanwhile (affinity.go).
func (c *Cluster) pull(ctx context.Context, slots int, next func(context.Context) jetstream.Msg, handle func(context.Context, jetstream.Msg)) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-c.conn.failed:
			stop()
		case <-ctx.Done():
		}
	}()
	free := make(chan struct{}, slots)
	var wg sync.WaitGroup
	defer wg.Wait()
	// The other hosts hear this host's keys and room (affinity.go), at once
	// when a partition is taken or let go.
	var held atomic.Int64
	changed := make(chan struct{}, 1)
	roomChanged := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	wg.Go(func() { c.announce(ctx, changed, func() int { return slots - int(held.Load()) }) })
	failed := func() error {
		select {
		case <-c.conn.failed:
			return c.conn.failure
		default:
			return nil
		}
	}
	for {
		select {
		case free <- struct{}{}:
		case <-ctx.Done():
			return failed()
		}
		msg := next(ctx)
		if msg == nil {
			return failed()
		}
		held.Add(1)
		release := c.hold(msg)
		roomChanged()
		wg.Go(func() {
			defer func() { <-free }()
			defer roomChanged()
			defer held.Add(-1)
			defer release()
			handle(ctx, msg)
		})
	}
}

// next waits for the next partition from consumers, asked in their order
// (priority order, critical first): the first that has a partition gives it.
func (c *Cluster) next(ctx context.Context, consumers []jetstream.Consumer) jetstream.Msg {
	for {
		for _, cons := range consumers {
			b, err := cons.FetchNoWait(1)
			if err != nil {
				if ctx.Err() == nil {
					c.log.Debug("fetching a partition", "error", err)
				}
				continue
			}
			var got jetstream.Msg
			for m := range b.Messages() {
				got = m
			}
			if got != nil {
				return got
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.wake:
		case <-time.After(pollInterval):
		}
	}
}

// handle proves one partition on this host's daemon and records its proof;
// the message is acked only once the proof is stored in the bucket.
func (c *Cluster) handle(ctx context.Context, msg jetstream.Msg) {
	p, ok := c.open(ctx, msg)
	if !ok {
		return
	}
	jobID, idx, md, rec, log := p.job, p.idx, p.md, p.rec, p.log

	if c.handBackToHolder(msg, rec.Circuit, md.Sequence.Stream, md.NumDelivered) {
		return
	}

	touch, release := c.holdRecord(msg, md.Sequence.Stream)
	defer release()
	stop := c.keepAlive(msg, touch)
	defer stop()
	in, err := c.readInput(ctx, msg, jobID, idx)
	if err != nil {
		c.inputFailed(ctx, msg, jobID, err)
		return
	}
	req := api.SubmitRequest{Circuit: rec.Circuit, Class: rec.Class, RequestID: api.ClusterRequestID(jobID, idx, md.NumDelivered)}
	if msg.Headers().Get(hdrInput) == inputAssign {
		req.Assignments = [][]byte{in}
	} else {
		req.Witnesses = [][]byte{in}
	}
	lj, err := c.local.Submit(ctx, req)
	if err != nil {
		c.localRefused(ctx, msg, md, rec, idx, err)
		return
	}
	final, err := c.awaitLocal(ctx, lj.ID, jobID)
	if err != nil {
		if ctx.Err() != nil {
			msg.Nak() // this host stops: another takes it now
			return
		}
		log.Warn("awaiting the partition's local job; it goes back to the queue", "local_job", lj.ID, "error", err)
		msg.NakWithDelay(time.Second)
		return
	}
	switch final.State {
	case api.JobDone:
		p := final.Partitions[0]
		pr := proofRecord{Proof: p.Proof, Public: p.PublicWitness, Host: c.cfg.Name, Device: p.Device, Attempts: p.Attempts, At: p.VerifiedAt,
			ProveStart: p.ProveStart, ProveEnd: p.ProveEnd, SynthesizedBy: msg.Headers().Get(hdrSynthesizedBy)}
		if err := c.recordProofPatiently(ctx, jobID, idx, pr); err != nil {
			log.Error("could not record a verified proof; the partition goes back to the queue", "error", err)
			msg.Nak()
			return
		}
		if err := msg.DoubleAck(ctx); err != nil {
			// Recorded: a redelivery finds the proof and only acks.
			log.Debug("ack not confirmed", "error", err)
		}
		if msg.Headers().Get(hdrObject) == readyName(jobID, idx) {
			// A synthesis host's object has served; what a failure
			// leaves, the bucket's TTL removes.
			c.request(ctx, func(ctx context.Context) error { return c.inputs.Delete(ctx, readyName(jobID, idx)) })
		}
		log.Debug("partition proved and recorded", "local_job", lj.ID)
	case api.JobCancelled:
		msg.Ack() // the cluster's job ended (awaitLocal cancelled it)
	default:
		c.failedHere(ctx, msg, md, idx, jobID, final.Error)
	}
}

// pulled is a partition message with its job's record.
type pulled struct {
	job string
	idx int
	md  *jetstream.MsgMetadata
	rec *jobRecord
	log hclog.Logger
}

// open reads which partition msg holds and its job's record. When there is
// nothing to do (a malformed message, a job unknown or ended, a partition
// proved already) it settles msg itself and returns false.
func (c *Cluster) open(ctx context.Context, msg jetstream.Msg) (pulled, bool) {
	subj := msg.Subject()
	jobID := subj[strings.LastIndexByte(subj, '.')+1:]
	idx, err := strconv.Atoi(msg.Headers().Get(hdrPartition))
	md, merr := msg.Metadata()
	if err != nil || merr != nil {
		c.log.Error("a partition message without its partition number; dropped", "subject", subj)
		msg.TermWithReason("no partition number")
		return pulled{}, false
	}
	log := c.log.With("job", jobID, "partition", idx, "delivery", md.NumDelivered)
	rec, _, err := c.getJob(ctx, jobID)
	switch {
	case errors.Is(err, errNotFound):
		log.Warn("a partition of a job the cluster does not know (pruned past retention?); dropped")
		msg.TermWithReason("job not found")
		return pulled{}, false
	case err != nil:
		log.Warn("reading the job; the partition goes back to the queue", "error", err)
		msg.NakWithDelay(time.Second)
		return pulled{}, false
	case rec.state().Terminal() || rec.verified(idx):
		msg.Ack()
		return pulled{}, false
	}
	// A redelivered partition may have been proved by a host that died
	// before it marked the job; a first delivery cannot have been.
	if md.NumDelivered > 1 && c.request(ctx, func(ctx context.Context) error {
		_, err := c.kv.Get(ctx, proofKey(jobID, idx))
		return err
	}) == nil {
		if err := c.markVerified(ctx, jobID, idx); err != nil {
			msg.NakWithDelay(time.Second)
			return pulled{}, false
		}
		msg.Ack()
		return pulled{}, false
	}
	return pulled{job: jobID, idx: idx, md: md, rec: rec, log: log}, true
}

// inputFailed handles a partition whose input could not be read: a lost
// object (missing, or not what its message says) fails the job, as no host
// can prove the partition; anything else leaves it to another try.
func (c *Cluster) inputFailed(ctx context.Context, msg jetstream.Msg, jobID string, err error) {
	if !errors.Is(err, errInputLost) {
		c.log.Warn("reading a partition's input; it goes back to the queue", "job", jobID, "error", err)
		msg.NakWithDelay(time.Second)
		return
	}
	// A job that ended meanwhile deleted its objects: nothing is lost.
	if rec, _, gerr := c.getJob(ctx, jobID); gerr == nil && rec.state().Terminal() {
		msg.Ack()
		return
	}
	c.log.Error("a partition's input is lost; the job fails", "job", jobID, "error", err)
	if _, _, err := c.endJob(ctx, jobID, api.JobFailed, err.Error()); err != nil {
		msg.NakWithDelay(time.Second)
		return
	}
	msg.TermWithReason("input lost")
}

// localRefused handles the local daemon's refusal of a partition: an input it
// calls invalid fails the same on every host and fails the job; anything else
// (a circuit this host does not serve, no healthy device, a full disk) leaves
// the partition to another host, or to this one later.
func (c *Cluster) localRefused(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, rec *jobRecord, idx int, err error) {
	if errors.Is(err, api.ErrInvalidArgument) {
		reason := fmt.Sprintf("partition %d: %v", idx, err)
		if _, _, err := c.endJob(ctx, rec.ID, api.JobFailed, reason); err != nil {
			// Not recorded: the job would wait for this partition forever.
			c.log.Warn("failing a job; the partition goes back to the queue", "job", rec.ID, "partition", idx, "error", err)
			msg.NakWithDelay(time.Second)
			return
		}
		msg.TermWithReason("invalid input")
		return
	}
	if md.NumDelivered%20 == 1 {
		c.log.Warn("this host cannot take a partition now; it is left to others", "job", rec.ID, "partition", idx, "reason", err)
	}
	msg.NakWithDelay(time.Second)
}

// failedHere handles a partition that failed on this host beyond the local
// retries: another delivery (another host, likely) tries again, until
// MaxDeliver deliveries have failed, which fails the job. Failures are
// counted in the bucket, not by the message's deliveries: a partition handed
// back (key affinity, a host that does not serve its circuit) has been
// delivered more often than it failed.
func (c *Cluster) failedHere(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, idx int, jobID, why string) {
	failed, err := c.countFailure(ctx, jobID, idx)
	if err != nil {
		c.log.Warn("counting a failed delivery; taking the delivery count instead", "job", jobID, "partition", idx, "error", err)
		failed = int(md.NumDelivered)
	}
	if failed >= c.cfg.MaxDeliver {
		reason := fmt.Sprintf("partition %d failed on %d deliveries, the last on host %s: %s", idx, failed, c.cfg.Name, why)
		if _, _, err := c.endJob(ctx, jobID, api.JobFailed, reason); err != nil {
			msg.NakWithDelay(time.Second)
			return
		}
		msg.TermWithReason("failed")
		return
	}
	c.log.Warn("partition failed on this host; it goes back to the queue", "job", jobID, "partition", idx, "delivery", md.NumDelivered, "reason", why)
	msg.NakWithDelay(time.Second)
}

// countFailure counts one more failed delivery of partition idx, by
// compare-and-set on its key in the bucket, and returns the count.
func (c *Cluster) countFailure(ctx context.Context, jobID string, idx int) (int, error) {
	key := failKey(jobID, idx)
	n := 0
	_, err := c.casKey(ctx, key, func(old []byte, found bool) ([]byte, bool, error) {
		n = 0
		if found {
			var err error
			if n, err = strconv.Atoi(string(old)); err != nil {
				return nil, false, fmt.Errorf("failure count %s: %w", key, err)
			}
		}
		n++
		return []byte(strconv.Itoa(n)), true, nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// recordProofPatiently retries recordProof while NATS recovers (a server
// lost, a leader elected), for up to two ack waits.
func (c *Cluster) recordProofPatiently(ctx context.Context, jobID string, idx int, pr proofRecord) error {
	deadline := time.Now().Add(2 * c.cfg.AckWait)
	for {
		err := c.recordProof(ctx, jobID, idx, pr)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		c.log.Warn("recording a proof; retrying", "job", jobID, "partition", idx, "error", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// keepAlive tells JetStream the partition is still being worked on, every
// fifth of the ack wait (so four in a row may be lost, to a NATS server's
// failover, before the partition goes to another host), until stop is called.
func (c *Cluster) keepAlive(msg jetstream.Msg, touch func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(c.cfg.AckWait / 5)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				msg.InProgress()
				touch()
			}
		}
	}()
	return func() { close(done) }
}

// awaitLocal waits for the local one-partition job id to end and returns it
// with its proof. While it waits it watches the cluster's job: when that
// ends (a cancel, another partition's failure) the local job is cancelled.
func (c *Cluster) awaitLocal(ctx context.Context, id, clusterJob string) (api.Job, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		t := time.NewTicker(max(time.Second, c.cfg.AckWait/3))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if r, _, err := c.getJob(ctx, clusterJob); err == nil && r.state().Terminal() {
					c.local.Cancel(ctx, id)
					return
				}
			}
		}
	}()
	var final *api.Job
	err := c.local.Await(ctx, id, func(ev api.JobEvent) error {
		if ev.Kind.Terminal() {
			final = ev.Job
		}
		return nil
	})
	if err == nil && final == nil {
		err = fmt.Errorf("local job %s: Await ended without a final job", id)
	}
	if err != nil {
		return api.Job{}, err
	}
	if final.State == api.JobDone && (len(final.Partitions) != 1 || len(final.Partitions[0].Proof) == 0) {
		return api.Job{}, fmt.Errorf("local job %s is done without its proof", id)
	}
	return *final, nil
}

// cancelLeftovers cancels the one-partition jobs an earlier run of this host
// left unfinished: it held their messages when it stopped, and JetStream has
// given them (or will) to whichever host asks next, with a new delivery.
func (c *Cluster) cancelLeftovers(ctx context.Context) {
	for _, st := range []api.JobState{api.JobQueued, api.JobRunning} {
		jobs, err := c.local.List(ctx, api.ListFilter{State: st, Limit: api.MaxPartitions})
		if err != nil {
			c.log.Warn("listing local jobs", "error", err)
			continue
		}
		for _, j := range jobs {
			if _, _, _, ok := api.ParseClusterRequestID(j.RequestID); ok {
				if _, err := c.local.Cancel(ctx, j.ID); err == nil {
					c.log.Info("cancelled a partition left by an earlier run; the cluster redelivers it", "local_job", j.ID, "request", j.RequestID)
				}
			}
		}
	}
}
