package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/config"
)

// The cluster-wide settings are one agreed configuration, held by the
// JetStream objects themselves: the stream's and buckets' replicas, the
// buckets' TTL ([journal] retention), the consumers' ack_wait. The first host
// creates them with its settings; every later host compares its own to them
// and refuses to start on a difference, naming the setting, both values and
// the way to change the cluster deliberately (zkhost serve
// --cluster-reconfigure, config.Cluster.Reconfigure). Nothing is ever changed
// silently: CreateOrUpdate, as used before, let the last host to start
// rewrite the cluster (replicas 3 to 1, a 30-day TTL to an hour) unlogged.

// setupTry bounds one attempt at finding or creating the objects: a request
// sent before JetStream has a leader gets no answer, and is sent again.
const setupTry = 2 * time.Second

// jsHandles are what setup creates or finds.
type jsHandles struct {
	stream jetstream.Stream
	cons   [4]jetstream.Consumer
	ready  [4]jetstream.Consumer
	kv     jetstream.KeyValue
	inputs jetstream.ObjectStore
}

// desired is this host's view of the cluster's objects.
type desired struct {
	stream jetstream.StreamConfig
	cons   [4]jetstream.ConsumerConfig
	ready  [4]jetstream.ConsumerConfig // synthesized partitions (synthesis.go)
	kv     jetstream.KeyValueConfig
	obj    jetstream.ObjectStoreConfig
	// kvStream and objStream are the streams JetStream keeps kv and obj in
	// (names.kvStream, names.objStream), whose settings drift is read from.
	kvStream, objStream string
}

func wanted(cc *config.Cluster, n names, retention time.Duration) desired {
	var d desired
	d.stream = jetstream.StreamConfig{
		Name:        n.stream,
		Description: "zkhost partitions waiting for a host",
		Subjects:    []string{n.subjects + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    cc.Replicas,
		Duplicates:  2 * time.Minute,
	}
	consumer := func(name, filter string) jetstream.ConsumerConfig {
		return jetstream.ConsumerConfig{
			Durable:       name,
			FilterSubject: filter,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       cc.AckWait,
			// Each host bounds what it holds (Pull); this bounds the whole cluster.
			MaxAckPending: 1 << 16,
			Replicas:      cc.Replicas,
		}
	}
	for i, class := range api.Classes {
		d.cons[i] = consumer(n.consumer(class), n.subjects+class.String()+".>")
		d.ready[i] = consumer(n.readyConsumer(class), n.readyStart()+class.String()+".>")
	}
	d.kv = jetstream.KeyValueConfig{
		Bucket:      n.bucket,
		Description: "zkhost jobs and their proofs",
		Storage:     jetstream.FileStorage,
		Replicas:    cc.Replicas,
		History:     1,
		TTL:         retention,
	}
	d.obj = jetstream.ObjectStoreConfig{
		Bucket:      n.inputs,
		Description: "zkhost partition inputs too large for a message",
		Storage:     jetstream.FileStorage,
		Replicas:    cc.Replicas,
		TTL:         retention,
	}
	d.kvStream, d.objStream = n.kvStream(), n.objStream()
	return d
}

// drift is one cluster-wide setting on which this host and the cluster differ.
type drift struct {
	setting string // as the config names it
	object  string // the NATS object holding the cluster's value
	here    string
	cluster string
}

// DriftError is a host's refusal to join a cluster whose settings differ
// from its own.
type DriftError struct{ Drifts []drift }

func (e *DriftError) Error() string {
	var b strings.Builder
	b.WriteString("this host's cluster settings differ from the running cluster's: ")
	for i, d := range e.Drifts {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s is %s here but %s in %s", d.setting, d.here, d.cluster, d.object)
	}
	b.WriteString(". Give this host the cluster's values, or, to change the whole cluster to this host's," +
		" start this host once with zkhost serve --cluster-reconfigure (then give every host the same values)")
	return b.String()
}

func showDuration(d time.Duration) string {
	if d == 0 {
		return "0 (kept forever)"
	}
	return d.String()
}

// compareStream lists the differences between a stream's settings and
// want's (replicas, and the TTL named by ttlSetting when it is not "").
func compareStream(have jetstream.StreamConfig, want jetstream.StreamConfig, object, ttlSetting string) []drift {
	var ds []drift
	if have.Replicas != want.Replicas {
		ds = append(ds, drift{"cluster.replicas", object, fmt.Sprint(want.Replicas), fmt.Sprint(have.Replicas)})
	}
	if ttlSetting != "" && have.MaxAge != want.MaxAge {
		ds = append(ds, drift{ttlSetting, object, showDuration(want.MaxAge), showDuration(have.MaxAge)})
	}
	return ds
}

func compareConsumer(have jetstream.ConsumerConfig, streamReplicas int, want jetstream.ConsumerConfig) []drift {
	var ds []drift
	object := "consumer " + want.Durable
	if have.AckWait != want.AckWait {
		ds = append(ds, drift{"cluster.ack_wait", object, want.AckWait.String(), have.AckWait.String()})
	}
	r := have.Replicas
	if r == 0 { // a consumer without its own count has its stream's
		r = streamReplicas
	}
	if r != want.Replicas {
		ds = append(ds, drift{"cluster.replicas", object, fmt.Sprint(want.Replicas), fmt.Sprint(r)})
	}
	return ds
}

// setup finds the stream, its consumers and the buckets, creating those
// missing with this host's settings and comparing its settings with those
// found (a difference is a *DriftError, or, with cc.Reconfigure, changed and
// logged). It retries while JetStream has no leader yet (servers of a
// cluster starting together elect one only once a majority is up), each try
// bounded by setupTry; any other error is returned at once, as NATS gave it.
func setup(ctx context.Context, js jetstream.JetStream, cc *config.Cluster, n names, retention time.Duration, st *connState, log hclog.Logger) (jsHandles, error) {
	want := wanted(cc, n, retention)
	var lastLog time.Time
	for {
		var h jsHandles
		err := st.attempt(ctx, setupTry, func(ctx context.Context) (err error) {
			h, err = setupOnce(ctx, js, cc, want, log)
			return err
		})
		if err == nil {
			return h, nil
		}
		var de *DriftError
		var refused *refusedError
		if errors.As(err, &de) || errors.As(err, &refused) || !(transient(err) || forming(err)) {
			return jsHandles{}, err
		}
		if ctx.Err() != nil {
			return jsHandles{}, fmt.Errorf("JetStream not ready: %w (are a majority of the NATS servers up, with JetStream enabled?)", err)
		}
		if time.Since(lastLog) > 5*time.Second {
			log.Info("waiting for JetStream", "reason", err)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// forming reports whether err is JetStream saying that its cluster is not
// formed yet: too few servers known for the replicas asked (10005, 10023), or
// JetStream not yet enabled (10039, 10076) on a server just started.
//
// Hosts starting together race to create the objects: the loser's create
// fails as already done (10058 a stream, 10148 a consumer, 10013 a consumer
// name, or a bucket that exists), and its next try finds them; a bucket
// just created by another host may not be found for a moment (10059).
func forming(err error) bool {
	if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return true
	}
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode {
	case 10005, 10023, 10039, 10076, 10058, 10148, 10013, 10059:
		return true
	}
	return apiErr.Code == 503
}

func setupOnce(ctx context.Context, js jetstream.JetStream, cc *config.Cluster, want desired, log hclog.Logger) (jsHandles, error) {
	var h jsHandles
	var ds []drift
	var err error
	created := false
	// The stream.
	h.stream, err = js.Stream(ctx, want.stream.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		h.stream, err = js.CreateStream(ctx, want.stream)
		created = err == nil
	}
	if err != nil {
		return h, fmt.Errorf("stream %s: %w", want.stream.Name, err)
	}
	streamCfg := h.stream.CachedInfo().Config
	sd := compareStream(streamCfg, want.stream, "stream "+want.stream.Name, "")
	ds = append(ds, sd...)
	if len(sd) > 0 && cc.Reconfigure {
		logChanges(log, sd)
		if h.stream, err = js.UpdateStream(ctx, want.stream); err != nil {
			return h, fmt.Errorf("changing stream %s: %w", want.stream.Name, err)
		}
		streamCfg = h.stream.CachedInfo().Config
	}
	// Its consumers: of partitions to synthesize, then of those synthesized.
	for i, cw := range append(want.cons[:], want.ready[:]...) {
		c, err := h.stream.Consumer(ctx, cw.Durable)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			c, err = h.stream.CreateConsumer(ctx, cw)
		}
		if err != nil {
			return h, fmt.Errorf("consumer %s: %w", cw.Durable, err)
		}
		cd := compareConsumer(c.CachedInfo().Config, streamCfg.Replicas, cw)
		ds = append(ds, cd...)
		if len(cd) > 0 && cc.Reconfigure {
			logChanges(log, cd)
			if c, err = h.stream.UpdateConsumer(ctx, cw); err != nil {
				return h, fmt.Errorf("changing consumer %s: %w", cw.Durable, err)
			}
		}
		if i < len(h.cons) {
			h.cons[i] = c
		} else {
			h.ready[i-len(h.cons)] = c
		}
	}
	// The jobs bucket. Deliberately parallel to the consumers' steps above and
	// the object store's below (open or create, compare, change when asked):
	// jetstream gives consumers, key-value buckets and object stores each
	// their own calls and config types, with no interface in common.
	h.kv, err = js.KeyValue(ctx, want.kv.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		h.kv, err = js.CreateKeyValue(ctx, want.kv)
	}
	if err != nil {
		return h, fmt.Errorf("bucket %s: %w", want.kv.Bucket, err)
	}
	kd, err := bucketDrift(ctx, js, want.kvStream, "bucket "+want.kv.Bucket, want.kv.Replicas, want.kv.TTL)
	if err != nil {
		return h, err
	}
	ds = append(ds, kd...)
	if len(kd) > 0 && cc.Reconfigure {
		logChanges(log, kd)
		if h.kv, err = js.UpdateKeyValue(ctx, want.kv); err != nil {
			return h, fmt.Errorf("changing bucket %s: %w", want.kv.Bucket, err)
		}
	}
	// The inputs' object store. Deliberately parallel to the jobs bucket's
	// steps above: see why there.
	h.inputs, err = js.ObjectStore(ctx, want.obj.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		h.inputs, err = js.CreateObjectStore(ctx, want.obj)
	}
	if err != nil {
		return h, fmt.Errorf("object store %s: %w", want.obj.Bucket, err)
	}
	od, err := bucketDrift(ctx, js, want.objStream, "object store "+want.obj.Bucket, want.obj.Replicas, want.obj.TTL)
	if err != nil {
		return h, err
	}
	ds = append(ds, od...)
	if len(od) > 0 && cc.Reconfigure {
		logChanges(log, od)
		if h.inputs, err = js.UpdateObjectStore(ctx, want.obj); err != nil {
			return h, fmt.Errorf("changing object store %s: %w", want.obj.Bucket, err)
		}
	}
	if len(ds) > 0 && !cc.Reconfigure {
		return h, &DriftError{Drifts: ds}
	}
	if created {
		log.Info("created the cluster's stream, consumers and buckets", "replicas", cc.Replicas, "ack_wait", cc.AckWait, "retention", showDuration(want.kv.TTL))
	}
	return h, nil
}

// bucketDrift compares a bucket's stream with the replicas and TTL wanted.
func bucketDrift(ctx context.Context, js jetstream.JetStream, streamName, object string, replicas int, ttl time.Duration) ([]drift, error) {
	s, err := js.Stream(ctx, streamName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", object, err)
	}
	return compareStream(s.CachedInfo().Config, jetstream.StreamConfig{Replicas: replicas, MaxAge: ttl}, object, "[journal] retention"), nil
}

func logChanges(log hclog.Logger, ds []drift) {
	for _, d := range ds {
		log.Warn("changing a cluster-wide setting (--cluster-reconfigure)", "setting", d.setting, "object", d.object, "from", d.cluster, "to", d.here)
	}
}
