// Package cluster makes several zkhost hosts one prover: they share one work
// queue on NATS JetStream, and any host's API serves any job.
//
// The shape (docs/cluster.md says how to run it):
//
//   - A job submitted to any host is checked there (the local daemon's
//     CheckSubmit: circuit, input sizes, budget), recorded in the JetStream
//     key-value bucket zkhost_jobs under job.<id>, and split into one message per
//     partition on the work-queue stream ZKHOST_PARTITIONS, subject
//     zkhost.part.<class>.<job> (names for the default prefix). The message
//     carries the partition's input, or, above inline_max, names it in the
//     object store zkhost_inputs (inputs.go).
//
//   - Every host runs a puller (worker.go) with one durable pull consumer per
//     priority class, shared by all hosts. It holds at most as many partitions
//     as it has device slots and synthesis workers, and it always asks the
//     critical consumer first, then high, normal, low, so critical partitions
//     go first on every host.
//
//   - A host proves a partition by submitting it to its own daemon as a
//     one-partition job (request id cluster-<job>-<partition>-<delivery>): the
//     daemon's queue, budget, synthesis, device slots and finalizer (which
//     verifies the proof with gnark) do the work, unchanged. While it runs, the
//     puller extends the message's ack deadline (InProgress). Once the verified
//     proof is stored in the bucket (proof.<job>.<partition>, written with
//     Create: a partition proved twice is recorded once) and the job record
//     updated by compare-and-set on its revision (so a job completes once), the
//     message is acked. A host that dies acks nothing: after ack_wait JetStream
//     delivers its partitions to another host, or at once when it comes back.
//
//   - A host prefers circuits whose keys it holds (affinity.go): hosts announce
//     their loaded keys and free room on plain NATS subjects, and a host that
//     pulls a partition whose key another live host holds with room hands it
//     back (a few times at most, so none is starved).
//
//   - Get, Await, Cancel and List read and write the bucket, so they answer the
//     same on every host; Status, keys and devices stay the local daemon's.
//
//   - Operating it: every name in NATS starts with [cluster] prefix
//     (names.go, which also lists the permissions a host's user needs); the
//     cluster-wide settings (replicas, ack_wait, retention) are those of the
//     JetStream objects, and a host whose own differ refuses to start unless
//     told to change them (settings.go); the connection reconnects without
//     end, reading its credential files again, and its state is in Status
//     with every host heard and the queue (conn.go, service.go); a host that
//     comes back hands back at once the partitions it held (held.go), and a
//     host fallen silent has its partitions handed back by a live one
//     (affinity.go, reap).
//
// With replicas = 3 the stream and the bucket survive the loss of one NATS
// server. Without [cluster] none of this runs and the daemon needs no NATS.
package cluster
