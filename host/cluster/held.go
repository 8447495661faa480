package cluster

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A host killed while it holds partitions acks none of them, and JetStream
// gives them to another host only once ack_wait has passed since the host's
// last in-progress word. A host that comes back sooner knows better: it
// records each partition it holds (its message's reply subject, which is what
// an ack or a nak is published to) as a file in [cluster]'s held directory,
// touched with every in-progress word and removed once the partition is let
// go, and at start it naks those still within ack_wait, so that JetStream
// hands them to a host at once. A record older than ack_wait is only removed:
// JetStream has redelivered that partition, and a nak now would take it from
// the host proving it.

// holdRecord records that this host holds msg; the returned functions touch
// the record (with each in-progress word) and remove it. Without a held
// directory they do nothing.
func (c *Cluster) holdRecord(msg jetstream.Msg, seq uint64) (touch, release func()) {
	if c.cfg.HeldDir == "" || msg.Reply() == "" {
		return func() {}, func() {}
	}
	path := filepath.Join(c.cfg.HeldDir, strconv.FormatUint(seq, 10))
	if err := os.WriteFile(path, []byte(msg.Reply()), 0o600); err != nil {
		c.log.Debug("recording a held partition", "error", err)
		return func() {}, func() {}
	}
	touch = func() {
		now := time.Now()
		os.Chtimes(path, now, now)
	}
	return touch, func() { os.Remove(path) }
}

// handBackHeld naks the partitions an earlier run of this host held when it
// stopped, those whose ack_wait has not passed, and removes every record. It
// returns how many it handed back.
func (c *Cluster) handBackHeld() int {
	if c.cfg.HeldDir == "" {
		return 0
	}
	if err := os.MkdirAll(c.cfg.HeldDir, 0o700); err != nil {
		c.log.Warn("the held partitions' directory", "error", err)
		return 0
	}
	entries, err := os.ReadDir(c.cfg.HeldDir)
	if err != nil {
		c.log.Warn("reading the held partitions' directory", "error", err)
		return 0
	}
	n := 0
	for _, e := range entries {
		path := filepath.Join(c.cfg.HeldDir, e.Name())
		info, ierr := e.Info()
		reply, rerr := os.ReadFile(path)
		if ierr == nil && rerr == nil && time.Since(info.ModTime()) < c.cfg.AckWait && len(reply) > 0 {
			if err := c.nc.Publish(string(reply), []byte("-NAK")); err == nil {
				n++
			}
		}
		os.Remove(path)
	}
	if n > 0 {
		c.nc.Flush()
		c.log.Info("handed back the partitions this host held when it stopped", "partitions", n)
	}
	return n
}

// hold notes that this host holds msg, for its presence (reap); the
// returned function lets it go.
func (c *Cluster) hold(msg jetstream.Msg) (release func()) {
	md, err := msg.Metadata()
	if err != nil || msg.Reply() == "" {
		return func() {}
	}
	seq := md.Sequence.Stream
	c.heldMu.Lock()
	c.held[seq] = msg.Reply()
	c.heldMu.Unlock()
	return func() {
		c.heldMu.Lock()
		delete(c.held, seq)
		c.heldMu.Unlock()
	}
}

// heldReplies are the reply subjects of the partitions this host holds.
func (c *Cluster) heldReplies() []string {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	out := make([]string, 0, len(c.held))
	for _, r := range c.held {
		out = append(out, r)
	}
	return out
}
