package cluster

import (
	"strings"

	"github.com/zkhost/zkhost/host/api"
)

// defaultPrefix starts every name in NATS when [cluster] prefix is unset.
const defaultPrefix = "zkhost"

// names are what one cluster calls its things in NATS, all from one prefix
// ([cluster] prefix): two clusters with different prefixes share one NATS
// account without meeting. Every host of a cluster must use the same prefix;
// changing it splits a running cluster in two.
type names struct {
	prefix string
	// stream is the partitions' work-queue stream; subjects its subjects'
	// start, one subject per class and job (partSubject).
	stream, subjects string
	// wake carries an empty message once a job's partitions are queued: a
	// plain subscription to the stream's subjects would give every host a
	// copy of every partition's input only to wake it.
	wake string
	// bucket holds the jobs' records and proofs; inputs the inputs too large
	// for a message (inputs.go).
	bucket, inputs string
	// presence and nudge start the hosts' presence subjects (affinity.go).
	presence, nudge string
}

func newNames(prefix string) names {
	if prefix == "" {
		prefix = defaultPrefix
	}
	return names{
		prefix:   prefix,
		stream:   strings.ToUpper(strings.ReplaceAll(prefix, "-", "_")) + "_PARTITIONS",
		subjects: prefix + ".part.",
		wake:     prefix + ".wake",
		bucket:   prefix + "_jobs",
		inputs:   prefix + "_inputs",
		presence: prefix + ".hosts.",
		nudge:    prefix + ".nudge.",
	}
}

// partSubject is the subject of job's partitions in class: per class, so
// each class has its own consumer; per job, so a cancel purges the job's
// partitions at once.
func (n names) partSubject(class api.Class, job string) string {
	return n.subjects + class.OrNormal().String() + "." + job
}

// consumer is the durable pull consumer of class's partitions, shared by
// every host.
func (n names) consumer(class api.Class) string { return n.prefix + "-" + class.String() }

// readyStart starts the subjects of synthesized partitions: their compact
// wire assignments, shipped by synthesis hosts (synthesis.go) to the proving
// hosts. Within the stream's subjects (readyStart's "ready" is no class), so
// the stream needs no change.
func (n names) readyStart() string { return n.subjects + "ready." }

// readySubject is the subject of job's synthesized partitions in class.
func (n names) readySubject(class api.Class, job string) string {
	return n.readyStart() + class.OrNormal().String() + "." + job
}

// readyConsumer is the durable pull consumer of class's synthesized
// partitions, shared by the proving hosts.
func (n names) readyConsumer(class api.Class) string { return n.prefix + "-ready-" + class.String() }

// kvStream and objStream are the streams JetStream keeps the buckets in.
func (n names) kvStream() string  { return "KV_" + n.bucket }
func (n names) objStream() string { return "OBJ_" + n.inputs }

// kvSubject is the subject a bucket key's writes are published on.
func (n names) kvSubject(key string) string { return "$KV." + n.bucket + "." + key }

// Permissions are the subjects a host's NATS user must be allowed to publish
// to and subscribe to, for a cluster of prefix: the JetStream API of its own
// stream, buckets and consumers only, its own subjects, and replies. A host
// started with --cluster-reconfigure needs the update rights too
// (reconfigure). docs/cluster.md lists them; a test runs hosts as a user with
// exactly these.
func Permissions(prefix string, reconfigure bool) (publish, subscribe []string) {
	n := newNames(prefix)
	api := "$JS.API."
	publish = []string{
		api + "INFO", // the account's JetStream (nats.go asks before a bucket)
		// The partitions' stream: created or found, its consumers created
		// or found, pulled from and acked; a cancelled job's partitions purged.
		api + "STREAM.INFO." + n.stream,
		api + "STREAM.CREATE." + n.stream,
		api + "STREAM.PURGE." + n.stream,
		api + "CONSUMER.INFO." + n.stream + ".*",
		api + "CONSUMER.CREATE." + n.stream + ".>",
		api + "CONSUMER.MSG.NEXT." + n.stream + ".*",
		"$JS.ACK." + n.stream + ".>",
		n.subjects + ">",
		// The jobs bucket: read (direct, and from the leader), written,
		// watched (List: an ordered consumer, deleted after).
		// Deliberately parallel to the object store's below: a permission
		// list is read and audited as written (docs/cluster.md lists it so),
		// and the two differ (only the object store is purged).
		api + "STREAM.INFO." + n.kvStream(),
		api + "STREAM.CREATE." + n.kvStream(),
		api + "STREAM.MSG.GET." + n.kvStream(),
		api + "DIRECT.GET." + n.kvStream() + ".>",
		api + "CONSUMER.CREATE." + n.kvStream() + ".>",
		api + "CONSUMER.DELETE." + n.kvStream() + ".*",
		"$KV." + n.bucket + ".>",
		// The inputs' object store: written, read, deleted (a purge).
		// Deliberately parallel to the jobs bucket's above: see why there.
		api + "STREAM.INFO." + n.objStream(),
		api + "STREAM.CREATE." + n.objStream(),
		api + "STREAM.PURGE." + n.objStream(),
		api + "STREAM.MSG.GET." + n.objStream(),
		api + "DIRECT.GET." + n.objStream() + ".>",
		api + "CONSUMER.CREATE." + n.objStream() + ".>",
		api + "CONSUMER.DELETE." + n.objStream() + ".*",
		"$O." + n.inputs + ".>",
		// Presence, nudges and wake-ups between hosts.
		n.wake, n.presence + "*", n.nudge + "*",
	}
	if reconfigure {
		for _, s := range []string{n.stream, n.kvStream(), n.objStream()} {
			publish = append(publish, api+"STREAM.UPDATE."+s)
		}
	}
	// Replies; a job record's writes (Await); the hosts' subjects.
	subscribe = []string{"_INBOX.>", "$KV." + n.bucket + ".>", n.wake, n.presence + "*", n.nudge + "*"}
	return publish, subscribe
}
