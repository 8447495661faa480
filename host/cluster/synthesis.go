package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/curve"
)

// Synthesis hosts.
//
// A host with cluster.role = "synthesize" has no devices: it solves
// partitions for the hosts that prove. It pulls partitions to synthesize
// (witnesses) from the same consumers as the proving hosts, critical first,
// solves each into its wires W and their bitmaps (one solver thread each,
// many partitions at once, as a proving host's synthesis runs under a
// backlog), encodes them as a compact wire assignment
// (circuit.MarshalCompactBits: two bits a wire and the few values that are
// neither 0 nor 1) and queues it on the class's synthesized subject
// (names.readySubject), in the object store when it is larger than a message
// takes. Circuits of either curve are served: the assignment's header tells
// its values' curve, and the proving host refuses one that is not its
// circuit's (a cluster matches circuits by name alone). A BLS12-381 one is
// written as version 2, which means BLS12-381 and which proving hosts of an
// older build read, so that they keep proving while the cluster is upgraded;
// a BN254 one is version 3, which names its curve. Only once JetStream has
// stored the synthesized partition is the original acked: a synthesis host
// that dies loses nothing, and a partition synthesized twice (a redelivery)
// is queued once, by its message id.
//
// Proving hosts take synthesized partitions before those to synthesize, in
// each class, and prove them as wire assignments: their daemon parses W and
// the device evaluates A, B and C and checks every constraint (or, for a
// backend without compact partitions, the host evaluates and checks them).
// The proof is verified with gnark before it counts, as every proof is. So a
// synthesis host adds its cores to the cluster's synthesis without being
// trusted: a wrong W fails its partition as a wrong assignment would.
//
// A synthesis host stays at most cluster.ready_max partitions ahead: it pulls
// nothing while as many synthesized partitions wait for a proving host.

// readyPoll is how often a synthesis host held back by ready_max looks again
// (a wake-up from a proving host's pull is not sent).
const readyPoll = 250 * time.Millisecond

// synthesizer is what a synthesis host keeps per circuit: the circuit, and
// its solver of partitions into compact wire assignments, over the circuit's
// curve (newSynthesizer).
type synthesizer struct {
	c     *circuit.Circuit
	solve func(in []byte) ([]byte, error)
}

// newSynthesizer returns the synthesizer of circuit c, its W vectors the
// scalars of c's curve.
func newSynthesizer(name string, c *circuit.Circuit) (*synthesizer, error) {
	switch c.Curve {
	case sdk.CurveBLS12381:
		return &synthesizer{c: c, solve: newCompactSolver[blsfr.Element](c).solve}, nil
	case sdk.CurveBN254:
		return &synthesizer{c: c, solve: newCompactSolver[bnfr.Element](c).solve}, nil
	}
	return nil, fmt.Errorf("circuit %q is %s, a curve cluster synthesis does not serve", name, c.Curve)
}

// compactSolver solves partitions of c into compact wire assignments, its W
// vectors, scalars S of c's curve, reused from one partition to the next.
type compactSolver[S ~[4]uint64, PS curve.Scalar[S]] struct {
	c     *circuit.Circuit
	wPool sync.Pool // *[]S of c.NbWires
}

func newCompactSolver[S ~[4]uint64, PS curve.Scalar[S]](c *circuit.Circuit) *compactSolver[S, PS] {
	s := &compactSolver[S, PS]{c: c}
	s.wPool.New = func() any { w := make([]S, c.NbWires); return &w }
	return s
}

// SynthesisStats are a synthesis host's counts since it started.
type SynthesisStats struct {
	Partitions  int64 // partitions synthesized and queued
	Constraints int64 // their constraints
	Bytes       int64 // their compact wire assignments' bytes
}

// RunSynthesis makes this host a synthesis host: it solves the partitions of
// circuits (by the names jobs use) for the proving hosts, with workers
// partitions at once (cluster.pull, when set, instead), until ctx ends or the
// NATS connection fails for good (then it returns why).
func (c *Cluster) RunSynthesis(ctx context.Context, circuits map[string]*circuit.Circuit, workers int) error {
	if len(circuits) == 0 {
		return errNoCircuits
	}
	c.handBackHeld()
	slots := c.cfg.Pull
	if slots <= 0 {
		slots = max(1, workers)
	}
	synths := map[string]*synthesizer{}
	for name, ci := range circuits {
		s, err := newSynthesizer(name, ci)
		if err != nil {
			return err
		}
		synths[name] = s
	}
	c.log.Info("synthesizing partitions for the proving hosts", "host", c.cfg.Name, "at_once", slots, "ready_max", c.cfg.ReadyMax)
	next := func(ctx context.Context) jetstream.Msg {
		if !c.waitReadyRoom(ctx) {
			return nil
		}
		return c.next(ctx, c.cons[:])
	}
	return c.pull(ctx, slots, next, func(ctx context.Context, msg jetstream.Msg) { c.synthesize(ctx, msg, synths) })
}

// Synthesized returns what this synthesis host has synthesized so far.
func (c *Cluster) Synthesized() SynthesisStats {
	return SynthesisStats{Partitions: c.synthStats.partitions.Load(), Constraints: c.synthStats.constraints.Load(), Bytes: c.synthStats.bytes.Load()}
}

// synthCounters back Synthesized.
type synthCounters struct {
	partitions, constraints, bytes atomic.Int64
}

// waitReadyRoom waits until fewer than ready_max synthesized partitions wait
// for a proving host; false when ctx ends first. A count it cannot read (NATS
// recovering) holds it back too: running ahead blind is what the bound is for.
func (c *Cluster) waitReadyRoom(ctx context.Context) bool {
	for {
		n, err := c.readyWaiting(ctx)
		if err == nil && n < c.cfg.ReadyMax {
			return true
		}
		if err != nil && ctx.Err() == nil {
			c.log.Debug("counting the synthesized partitions waiting", "error", err)
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(readyPoll):
		}
	}
}

// readyWaiting counts the synthesized partitions no proving host has taken
// yet, in every class.
func (c *Cluster) readyWaiting(ctx context.Context) (int, error) {
	n := 0
	for _, cons := range c.ready {
		var info *jetstream.ConsumerInfo
		err := c.request(ctx, func(ctx context.Context) (err error) {
			info, err = cons.Info(ctx)
			return err
		})
		if err != nil {
			return 0, err
		}
		n += int(info.NumPending)
	}
	return n, nil
}

// synthesize solves one partition and queues its compact wire assignment as
// a synthesized partition; the message is acked once that is stored.
func (c *Cluster) synthesize(ctx context.Context, msg jetstream.Msg, synths map[string]*synthesizer) {
	p, ok := c.open(ctx, msg)
	if !ok {
		return
	}
	s := synths[p.rec.Circuit]
	if s == nil {
		if p.md.NumDelivered%20 == 1 {
			p.log.Warn("this synthesis host does not serve the partition's circuit; it is left to others", "circuit", p.rec.Circuit)
		}
		msg.NakWithDelay(time.Second)
		return
	}
	touch, release := c.holdRecord(msg, p.md.Sequence.Stream)
	defer release()
	stop := c.keepAlive(msg, touch)
	defer stop()
	in, err := c.readInput(ctx, msg, p.job, p.idx)
	if err != nil {
		c.inputFailed(ctx, msg, p.job, err)
		return
	}
	began := time.Now()
	out, err := s.solve(in)
	if err != nil {
		// The input's fault: it fails the same on every host.
		c.localRefused(ctx, msg, p.md, p.rec, p.idx, api.InvalidArgumentf("%v", err))
		return
	}
	solved := time.Since(began)
	m := nats.NewMsg(c.n.readySubject(p.rec.Class, p.job))
	// One synthesized copy per partition, however often it is synthesized
	// within JetStream's duplicate window.
	m.Header.Set(jetstream.MsgIDHeader, readyName(p.job, p.idx))
	m.Header.Set(hdrPartition, strconv.Itoa(p.idx))
	m.Header.Set(hdrInput, inputAssign)
	m.Header.Set(hdrSynthesizedBy, c.cfg.Name)
	if len(out) > c.inlineMax() {
		if err := c.putInput(ctx, m, readyName(p.job, p.idx), p.job, p.idx, out); err != nil {
			p.log.Warn("storing a synthesized partition; it goes back to the queue", "error", err)
			msg.NakWithDelay(time.Second)
			return
		}
	} else {
		m.Data = out
	}
	if err := c.request(ctx, func(ctx context.Context) error {
		_, err := c.js.PublishMsg(ctx, m)
		return err
	}); err != nil {
		p.log.Warn("queueing a synthesized partition; it goes back to the queue", "error", err)
		msg.NakWithDelay(time.Second)
		return
	}
	if err := msg.DoubleAck(ctx); err != nil {
		// Queued: a redelivery is synthesized again and dropped as a duplicate.
		p.log.Debug("ack not confirmed", "error", err)
	}
	c.nc.Publish(c.n.wake, nil) // the proving hosts' idle pullers ask at once
	c.synthStats.partitions.Add(1)
	c.synthStats.constraints.Add(int64(s.c.NbConstraints))
	c.synthStats.bytes.Add(int64(len(out)))
	p.log.Info("partition synthesized", "circuit", p.rec.Circuit, "constraints", s.c.NbConstraints,
		"took", solved.Round(time.Millisecond), "bytes", len(out))
}

// solve solves a gnark full witness into W, on one thread, and returns W as a
// compact wire assignment, whose header tells the circuit's curve (the
// proving host refuses one of another curve). A wire assignment (a job that
// carries them goes to the synthesized subjects, but a message may be older)
// is packed as it is.
func (s *compactSolver[S, PS]) solve(in []byte) ([]byte, error) {
	wp := s.wPool.Get().(*[]S)
	defer s.wPool.Put(wp)
	words := sdk.CompactWords(uint64(s.c.NbWires))
	other, ones := make([]uint64, words), make([]uint64, words)
	_, nbOther, err := circuit.SynthesizeInputCompact(s.c, in, 1, *wp, other, ones)
	if err != nil {
		return nil, err
	}
	out, err := circuit.MarshalCompactBits[S, PS](*wp, other, ones, nbOther, s.c.NbPublic, s.c.NbSecret, 1)
	if err != nil {
		return nil, fmt.Errorf("packing W: %w", err)
	}
	return out, nil
}

// errNoCircuits is a synthesis host's refusal to start with nothing to solve.
var errNoCircuits = errors.New("cluster: a synthesis host needs at least one circuit ([[circuit]] tables, or key sets in the state directory's keys/)")
