package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zkhost/zkhost/host/config"
)

// Inputs larger than a NATS message.
//
// A partition message carries its input when it is at most inlineMax bytes.
// A larger input (a real partition's witness or wire assignment is hundreds
// of MB; a NATS message at most 64 MiB, 8 MiB by default here) is stored in
// the object store bucket zkhost_inputs, replicated like the stream, as object
// <job>.<partition>; the message carries the object's name, size and SHA-256
// in its headers and no data. The host that pulls the partition reads the
// object and checks its size and digest before proving it. The objects of a
// job are deleted when it ends (done, failed or cancelled), by the host whose
// write ended it; the bucket's TTL (the journal's retention, as for the
// records) removes any a host could not delete (it died in between).

const (
	// headers of a partition message whose input is an object
	hdrObject = "Zkhost-Object" // the object's name in the inputs bucket
	hdrSize   = "Zkhost-Size"   // its size in bytes
	hdrSHA256 = "Zkhost-Sha256" // its SHA-256, hex

	// maxChunk bounds an object's chunk (one message each): a 2 GiB input is
	// 1024 chunks, well within the publisher's 4000 acks in flight.
	maxChunk = 2 << 20
	// putRate is the slowest storing or reading of an input allowed for, in
	// bytes per second (the object store's own timeouts, 5s per chunk acked
	// and 5s for a whole read, are too short for a large object).
	putRate = 1 << 20
	// inputSettle is how long an object that is missing or not as its
	// message says is read again before it is called lost (readInput).
	inputSettle = 5 * time.Second
)

func inputName(job string, idx int) string { return job + "." + strconv.Itoa(idx) }

// readyName is the object of partition idx's compact wire assignment, shipped
// by a synthesis host (synthesis.go) beside the input it was solved from.
func readyName(job string, idx int) string { return inputName(job, idx) + ".w" }

// maxPayload is the embedded server's max_payload (8 MiB when unset).
func maxPayload(cc *config.Cluster) uint64 {
	if cc.MaxPayload == 0 {
		return config.DefaultMaxPayload
	}
	return cc.MaxPayload
}

// inlineMax is the largest input a partition message carries itself: the
// configured inline_max, and never more than the servers' max_payload allows
// (an external NATS cluster may carry less than this host's config says).
func (c *Cluster) inlineMax() int {
	n := int(c.cfg.InlineMax)
	if n == 0 {
		n = config.DefaultInlineMax
	}
	return max(0, min(n, c.roomInMessage()))
}

// chunkSize is the object store's chunk: a chunk is one message.
func (c *Cluster) chunkSize() uint32 {
	return uint32(max(1, min(maxChunk, c.roomInMessage())))
}

// roomInMessage is what the servers' max_payload leaves for a message's
// payload beside its subject and headers.
func (c *Cluster) roomInMessage() int { return int(c.nc.MaxPayload()) - config.InlineMargin }

// errInputLost is an input object that is missing or does not match the
// reference in its message: no host can prove its partition, so the job fails.
var errInputLost = errors.New("input lost")

// putInput stores input idx of job as object name and sets the headers of
// its message to name it. An object of that name with the same content (a
// retried submit) is kept as it is.
func (c *Cluster) putInput(ctx context.Context, m *nats.Msg, name, job string, idx int, in []byte) error {
	sum := sha256.Sum256(in)
	m.Header.Set(hdrObject, name)
	m.Header.Set(hdrSize, strconv.Itoa(len(in)))
	m.Header.Set(hdrSHA256, hex.EncodeToString(sum[:]))
	if info, err := c.inputs.GetInfo(ctx, name); err == nil && info.Size == uint64(len(in)) && info.Digest == objectDigest(sum) {
		return nil
	}
	meta := jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: c.chunkSize()}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute+time.Duration(len(in)/putRate)*time.Second)
	defer cancel()
	if _, err := c.inputs.Put(ctx, meta, bytes.NewReader(in)); err != nil {
		return fmt.Errorf("storing input %d of job %s (%d bytes) in bucket %s: %w", idx, job, len(in), c.n.inputs, err)
	}
	return nil
}

// objectDigest is sum as the object store writes its digests.
func objectDigest(sum [32]byte) string {
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:])
}

// readInput returns the input of a partition message: its data, or the
// object its headers name, checked against their size and digest. A missing
// or corrupt object is errInputLost, with a message naming the job, the
// partition and what is wrong; any other error (NATS recovering) is worth
// another try.
func (c *Cluster) readInput(ctx context.Context, msg jetstream.Msg, job string, idx int) ([]byte, error) {
	h := msg.Headers()
	name := h.Get(hdrObject)
	if name == "" {
		return msg.Data(), nil
	}
	lost := func(format string, a ...any) error {
		return fmt.Errorf("%w: job %s partition %d: input object %s in bucket %s: %s", errInputLost, job, idx, name, c.n.inputs, fmt.Sprintf(format, a...))
	}
	size, err := strconv.Atoi(h.Get(hdrSize))
	want, herr := hex.DecodeString(h.Get(hdrSHA256))
	if err != nil || herr != nil || len(want) != sha256.Size {
		return nil, lost("the message's reference is malformed (size %q, sha256 %q)", h.Get(hdrSize), h.Get(hdrSHA256))
	}
	read := func() ([]byte, error) {
		// Without a deadline the object store allows a read 5s in all.
		ctx, cancel := context.WithTimeout(ctx, time.Minute+time.Duration(size/putRate)*time.Second)
		defer cancel()
		b, err := c.inputs.GetBytes(ctx, name)
		switch {
		case errors.Is(err, jetstream.ErrObjectNotFound):
			return nil, lost("not found (deleted, or past retention)")
		case errors.Is(err, jetstream.ErrDigestMismatch):
			return nil, lost("its chunks do not match the object's digest (corrupt)")
		case err != nil:
			return nil, fmt.Errorf("job %s partition %d: reading input object %s: %w", job, idx, name, err)
		}
		if len(b) != size {
			return nil, lost("%d bytes, the message says %d", len(b), size)
		}
		if got := sha256.Sum256(b); !bytes.Equal(got[:], want) {
			return nil, lost("sha256 %x, the message says %x", got, want)
		}
		return b, nil
	}
	// A replica that lags (reads are served by any replica, and the
	// reading consumer may sit on it) shows an object just stored as
	// missing or short: only what stays so for inputSettle is lost.
	deadline := time.Now().Add(inputSettle)
	for {
		b, err := read()
		if err == nil || !errors.Is(err, errInputLost) || time.Now().After(deadline) {
			return b, err
		}
		c.log.Debug("an input object is not as its message says; reading it again", "job", job, "partition", idx, "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// dropInputs deletes the input objects of job r, which has ended. A failure
// is logged, not returned: the job's end stands, and the bucket's TTL removes
// what is left.
func (c *Cluster) dropInputs(ctx context.Context, r *jobRecord) {
	for i := range r.Partitions {
		if !r.inObject(i) {
			continue
		}
		// Not found may be a lagging replica's answer: asked a few times.
		var err error
		for try := 0; try < 4 && ctx.Err() == nil; try++ {
			err = c.request(ctx, func(ctx context.Context) error { return c.inputs.Delete(ctx, inputName(r.ID, i)) })
			if !errors.Is(err, jetstream.ErrObjectNotFound) {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
		if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			c.log.Warn("deleting an ended job's input object; the bucket's TTL will", "job", r.ID, "partition", i, "error", err)
		}
	}
}
