package cluster

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// Key affinity: a host prefers the circuits whose keys it holds.
//
// Loading a proving key costs seconds to minutes (a 2^24-constraint key is
// GBs, read and copied to the device) that proving a partition on a host that
// already holds it does not. So every host announces, on a plain NATS subject
// (zkhost.hosts.<name>, not stored), which circuits' keys it holds loaded on
// a healthy device and how many partitions it would pull now (its free room):
// every presenceInterval, at once when its room changes, and "gone" when it
// leaves. A host that pulls a partition whose key it does not hold, while a
// live host (heard within presenceTTL) that holds it has free room, hands the
// partition back (NakWithDelay, affinityDelay) and tells that host to ask
// (zkhost.nudge.<name>) once the delay is over. It does so for at most
// affinityTries deliveries of one partition (counted on this host), and never
// past the affinityMaxDelivered-th delivery: a partition whose holder stays
// busy, or is gone, is proved by whoever pulls it, so none is starved and a
// hand-back delays a partition by at most a few seconds.
const (
	presenceInterval     = time.Second
	presenceTTL          = 3 * presenceInterval
	affinityDelay        = 250 * time.Millisecond
	affinityTries        = 3
	affinityMaxDelivered = 10
	// forgetAfter is how long status still lists a host not heard from.
	forgetAfter = 10 * time.Minute
)

// presence is what a host announces.
type presence struct {
	Host string `json:"host"`
	// Keys are the circuits whose proving key is loaded on one of its
	// healthy devices.
	Keys []string `json:"keys"`
	// Free is how many more partitions it would pull now.
	Free int `json:"free"`
	// Devices are its devices, "(down)" after one not healthy (for status).
	Devices []string `json:"devices,omitempty"`
	// Held are the reply subjects of the partitions it holds: when it falls
	// silent, a live host naks them (reap), so its death costs them
	// seconds, not ack_wait.
	Held []string `json:"held,omitempty"`
	// Gone says it is leaving the cluster.
	Gone bool `json:"gone,omitempty"`
}

// peers is what this host knows of the others' presence, and of its own.
type peers struct {
	mu   sync.Mutex
	self string
	seen map[string]heard // other hosts, by name
	own  []string         // this host's loaded keys
	// ownDevices and ownFree are this host's devices and room, as it last
	// announced them.
	ownDevices []string
	ownFree    int
	// handedBack counts this host's hand-backs per message (stream
	// sequence); entries go with their time.
	handedBack map[uint64]handBack
}

type heard struct {
	presence
	at time.Time
	// reaped says its held partitions were handed back after it fell silent.
	reaped bool
}

type handBack struct {
	n    int
	last time.Time
}

func newPeers(self string) *peers {
	return &peers{self: self, seen: map[string]heard{}, handedBack: map[uint64]handBack{}}
}

// heard records a presence message.
func (p *peers) heard(pr presence, now time.Time) {
	if pr.Host == p.self || pr.Host == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.Gone {
		delete(p.seen, pr.Host)
		return
	}
	p.seen[pr.Host] = heard{presence: pr, at: now}
	for name, h := range p.seen { // a host that died unannounced, long ago
		if now.Sub(h.at) > forgetAfter {
			delete(p.seen, name)
		}
	}
}

func (p *peers) setOwn(keys []string) {
	p.mu.Lock()
	p.own = keys
	p.mu.Unlock()
}

// reap returns, by host, the held partitions of the hosts silent for
// presenceTTL that this host is to hand back (it is the first by name of the
// live hosts, itself included, so one host naks each partition once), and
// marks those hosts reaped.
func (p *peers) reap(now time.Time) map[string][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, h := range p.seen {
		if now.Sub(h.at) < presenceTTL && name < p.self {
			return nil // another live host reaps
		}
	}
	out := map[string][]string{}
	for name, h := range p.seen {
		if now.Sub(h.at) >= presenceTTL && !h.reaped {
			h.reaped = true
			p.seen[name] = h
			if len(h.Held) > 0 {
				out[name] = h.Held
			}
		}
	}
	return out
}

func (p *peers) setOwnRoom(devices []string, free int) {
	p.mu.Lock()
	p.ownDevices, p.ownFree = devices, free
	p.mu.Unlock()
}

// hosts lists every host heard (alive when heard within presenceTTL) and
// this one, by name.
func (p *peers) hosts(now time.Time) []api.ClusterHost {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []api.ClusterHost{{Name: p.self, Alive: true, LastSeen: now, Keys: p.own, Free: p.ownFree, Devices: p.ownDevices}}
	for name, h := range p.seen {
		out = append(out, api.ClusterHost{Name: name, Alive: now.Sub(h.at) < presenceTTL, LastSeen: h.at, Keys: h.Keys, Free: h.Free, Devices: h.Devices})
	}
	slices.SortFunc(out, func(a, b api.ClusterHost) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// handBack decides whether this host hands back a partition of circuit, the
// message seq on its delivered-th delivery, and if so to which host: the live
// holder of circuit's key with the most free room. It counts the hand-back.
func (p *peers) handBack(circuit string, seq, delivered uint64, now time.Time) (holder string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if delivered > affinityMaxDelivered || slices.Contains(p.own, circuit) {
		return "", false
	}
	for s, hb := range p.handedBack {
		if now.Sub(hb.last) > time.Minute {
			delete(p.handedBack, s)
		}
	}
	if p.handedBack[seq].n >= affinityTries {
		return "", false
	}
	best := 0
	for name, h := range p.seen {
		if now.Sub(h.at) < presenceTTL && h.Free > best && slices.Contains(h.Keys, circuit) {
			holder, best = name, h.Free
		}
	}
	if holder == "" {
		return "", false
	}
	p.handedBack[seq] = handBack{p.handedBack[seq].n + 1, now}
	return holder, true
}

// listenPresence subscribes to the other hosts' presence and to this host's
// nudges.
func (c *Cluster) listenPresence() error {
	sub, err := c.nc.Subscribe(c.n.presence+"*", func(m *nats.Msg) {
		var pr presence
		if json.Unmarshal(m.Data, &pr) == nil {
			c.peers.heard(pr, time.Now())
		}
	})
	if err != nil {
		return err
	}
	c.presenceSubs = append(c.presenceSubs, sub)
	if sub, err = c.nc.Subscribe(c.n.nudge+c.cfg.Name, func(*nats.Msg) { c.signal() }); err != nil {
		return err
	}
	c.presenceSubs = append(c.presenceSubs, sub)
	return nil
}

// announce publishes this host's presence every presenceInterval and each
// time changed is signalled, until ctx ends; then it says the host is gone.
// room reports the partitions the puller would take now.
func (c *Cluster) announce(ctx context.Context, changed <-chan struct{}, room func() int) {
	subject := c.n.presence + c.cfg.Name
	send := func(pr presence) {
		b, _ := json.Marshal(pr)
		c.nc.Publish(subject, b)
	}
	keys, devices := c.loadedKeys(ctx)
	t := time.NewTicker(presenceInterval)
	defer t.Stop()
	for {
		free := room()
		c.peers.setOwnRoom(devices, free)
		send(presence{Host: c.cfg.Name, Keys: keys, Free: free, Devices: devices, Held: c.heldReplies()})
		select {
		case <-ctx.Done():
			send(presence{Host: c.cfg.Name, Gone: true})
			c.nc.FlushTimeout(time.Second) // a NATS server lost must not hold the host's stop
			return
		case <-changed:
		case <-t.C:
			keys, devices = c.loadedKeys(ctx)
			c.reap()
		}
	}
}

// reap hands back the partitions of the hosts fallen silent (no presence for
// presenceTTL, without saying they leave: killed, or cut off), when this host
// is the one to do it: JetStream would give them to another host only after
// ack_wait. It naks each (an ack or a nak is a publish to the delivery's
// reply subject, from any connection). Only a host connected for longer than
// presenceTTL reaps, so one that was itself cut off, and has not heard the
// others since, hands back nobody's work.
//
// With an ack_wait no longer than a silence takes to notice, JetStream has
// redelivered them by then, and a nak would take them from their new holder:
// such a cluster does not reap.
func (c *Cluster) reap() {
	if c.cfg.AckWait <= presenceTTL+presenceInterval {
		return
	}
	st := c.conn.status()
	if st.State != "connected" || time.Since(st.Since) < presenceTTL+presenceInterval {
		return
	}
	for host, replies := range c.peers.reap(time.Now()) {
		for _, r := range replies {
			c.nc.Publish(r, []byte("-NAK"))
		}
		c.log.Warn("a host fell silent; handing back the partitions it held", "host", host, "partitions", len(replies))
	}
}

// circuitKeys is what a local daemon that names its circuits' keys offers
// (*daemon.Daemon does): a device reports the keys it holds by key ID
// ("chain-k8"), a job names its circuit as clients do ("chain").
type circuitKeys interface {
	Circuit(name string) (*circuit.Circuit, bool)
}

// loadedKeys reads the circuits (by the names jobs use) whose key is loaded
// on a healthy device of this host, and keeps them as its own; and the
// host's devices, for status.
func (c *Cluster) loadedKeys(ctx context.Context) (keys, devices []string) {
	if c.local == nil {
		return nil, nil // a synthesis host: no devices, no keys
	}
	st, err := c.local.Status(ctx)
	if err != nil {
		c.peers.mu.Lock()
		defer c.peers.mu.Unlock()
		return c.peers.own, c.peers.ownDevices
	}
	resident := map[string]bool{}
	for _, d := range st.Devices {
		name := d.Name
		if !d.Healthy {
			name += " (down)"
		}
		devices = append(devices, name)
		if d.Healthy {
			for _, k := range d.KeysResident {
				resident[k] = true
			}
		}
	}
	ck, _ := c.local.(circuitKeys)
	for _, name := range c.circuits {
		id := name
		if ck != nil {
			if cc, ok := ck.Circuit(name); ok {
				id = cc.Name
			}
		}
		if resident[id] {
			keys = append(keys, name)
		}
	}
	slices.Sort(keys)
	c.peers.setOwn(keys)
	return keys, devices
}

// handBackToHolder hands a partition of circuit back for a live host that
// holds its key and has room, and nudges that host once the delay is over;
// it reports whether it did.
func (c *Cluster) handBackToHolder(msg jetstream.Msg, circuit string, seq, delivered uint64) bool {
	holder, ok := c.peers.handBack(circuit, seq, delivered, time.Now())
	if !ok {
		return false
	}
	c.log.Debug("handing a partition back for the host that holds its key", "circuit", circuit, "holder", holder, "delivery", delivered)
	msg.NakWithDelay(affinityDelay)
	time.AfterFunc(affinityDelay+20*time.Millisecond, func() { c.nc.Publish(c.n.nudge+holder, nil) })
	return true
}
