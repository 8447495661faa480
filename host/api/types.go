package api

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
)

// Class is a job's priority class. Every queued partition of a higher class dispatches
// before any of a lower class. The numeric order is the priority order (ClassCritical
// first); the zero value ClassUnspecified means ClassNormal. It is the one type of the
// idea: the scheduler (host/queue), the budget, the config and the journal use it, and
// only the protobuf and journal edges turn it into another form (an enum, a name).
type Class int

// Priority classes.
const (
	ClassUnspecified Class = iota // treated as ClassNormal
	ClassCritical                 // deadline proofs; the budget holds memory back for them
	ClassHigh
	ClassNormal
	ClassLow
)

// Classes lists the priority classes in priority order, highest first.
var Classes = []Class{ClassCritical, ClassHigh, ClassNormal, ClassLow}

// NumClasses is the number of priority classes (ClassUnspecified is none of them).
const NumClasses = 4

var classNames = map[Class]string{
	ClassUnspecified: "unspecified",
	ClassCritical:    "critical",
	ClassHigh:        "high",
	ClassNormal:      "normal",
	ClassLow:         "low",
}

// String returns the class's lower-case name.
func (c Class) String() string { return enumName(classNames, c) }

// Valid reports whether c is one of the four classes or ClassUnspecified: what a
// request may carry.
func (c Class) Valid() bool { return c >= ClassUnspecified && c <= ClassLow }

// Specified reports whether c is one of the four classes, neither ClassUnspecified
// nor out of range: what the scheduler and the budget accept.
func (c Class) Specified() bool { return c >= ClassCritical && c <= ClassLow }

// Index returns c's position in priority order, 0 for ClassCritical up to
// NumClasses-1 for ClassLow, for per-class arrays. c must be Specified.
func (c Class) Index() int { return int(c - ClassCritical) }

// OrNormal returns c, or ClassNormal when c is ClassUnspecified.
func (c Class) OrNormal() Class {
	if c == ClassUnspecified {
		return ClassNormal
	}
	return c
}

// ParseClass parses a class name ("critical", "high", "normal", "low").
func ParseClass(s string) (Class, error) {
	return parseEnum(classNames, s, "priority class", ClassUnspecified)
}

// JobState is where a job stands; the journal keeps it too (as the state's name).
type JobState int

// Job states. JobDone, JobFailed and JobCancelled are terminal.
const (
	JobStateUnspecified JobState = iota // in a ListFilter: any state
	JobQueued                           // accepted, no partition started yet
	JobRunning                          // at least one partition started
	JobDone                             // every partition proved and verified
	JobFailed                           // a partition failed beyond its retries, or the job could not run
	JobCancelled                        // cancelled by a client
)

var jobStateNames = map[JobState]string{
	JobStateUnspecified: "unspecified",
	JobQueued:           "queued",
	JobRunning:          "running",
	JobDone:             "done",
	JobFailed:           "failed",
	JobCancelled:        "cancelled",
}

// String returns the state's lower-case name.
func (s JobState) String() string { return enumName(jobStateNames, s) }

// Terminal reports whether a job in state s has ended.
func (s JobState) Terminal() bool { return s == JobDone || s == JobFailed || s == JobCancelled }

// EndEvent returns the terminal event kind of a job that ended in state s
// (EventJobDone, EventJobFailed, EventJobCancelled), or EventUnspecified for a
// state that is not terminal.
func (s JobState) EndEvent() EventKind {
	switch s {
	case JobDone:
		return EventJobDone
	case JobFailed:
		return EventJobFailed
	case JobCancelled:
		return EventJobCancelled
	}
	return EventUnspecified
}

// RecordedPartitionState is the state a partition of a job in state s shows
// when all that is known of it is whether it was proved: verified when
// proved, else failed or cancelled with its job, else queued. A job read back
// from the journal or the cluster's records shows it, and so does a live job
// once it ends (the daemon's endJob), so every view of an ended job agrees.
func (s JobState) RecordedPartitionState(proved bool) PartitionState {
	switch {
	case proved:
		return PartitionVerified
	case s == JobCancelled:
		return PartitionCancelled
	case s == JobFailed:
		return PartitionFailed
	}
	return PartitionQueued
}

// ParseJobState parses a job state name ("queued", "running", "done", "failed", "cancelled").
func ParseJobState(s string) (JobState, error) {
	return parseEnum(jobStateNames, s, "job state", JobStateUnspecified)
}

// PartitionState is where one partition stands.
type PartitionState int

// Partition states.
const (
	PartitionStateUnspecified PartitionState = iota
	PartitionQueued                          // waiting for budget and a synthesis thread (again after a retry)
	PartitionSynthesizing                    // the circuit is being solved on the CPU
	PartitionProving                         // handed to a device
	PartitionVerified                        // proved, and the proof verified
	PartitionFailed                          // failed beyond its retries, or its job failed before it finished
	PartitionCancelled                       // the job was cancelled before the partition finished
)

var partitionStateNames = map[PartitionState]string{
	PartitionStateUnspecified: "unspecified",
	PartitionQueued:           "queued",
	PartitionSynthesizing:     "synthesizing",
	PartitionProving:          "proving",
	PartitionVerified:         "verified",
	PartitionFailed:           "failed",
	PartitionCancelled:        "cancelled",
}

// String returns the state's lower-case name.
func (s PartitionState) String() string { return enumName(partitionStateNames, s) }

// EventKind names what a JobEvent reports.
type EventKind int

// Event kinds. EventJobDone, EventJobFailed and EventJobCancelled are terminal: they end
// an Await and carry the final job.
const (
	EventUnspecified           EventKind = iota
	EventSnapshot                        // the job as it is when Await starts (no proof bytes)
	EventPartitionQueued                 // a partition entered the queue
	EventPartitionSynthesizing           // a partition's synthesis started
	EventPartitionProving                // a partition was handed to a device
	EventPartitionVerified               // a partition's proof verified
	EventPartitionRetried                // an attempt failed (Reason); the partition is queued again
	EventPartitionFailed                 // a partition failed for good (Reason)
	EventJobDone                         // terminal; Job holds the proofs
	EventJobFailed                       // terminal
	EventJobCancelled                    // terminal
)

var eventKindNames = map[EventKind]string{
	EventUnspecified:           "unspecified",
	EventSnapshot:              "snapshot",
	EventPartitionQueued:       "queued",
	EventPartitionSynthesizing: "synthesizing",
	EventPartitionProving:      "proving",
	EventPartitionVerified:     "verified",
	EventPartitionRetried:      "retried",
	EventPartitionFailed:       "failed",
	EventJobDone:               "job_done",
	EventJobFailed:             "job_failed",
	EventJobCancelled:          "job_cancelled",
}

// String returns the kind's name.
func (k EventKind) String() string { return enumName(eventKindNames, k) }

// Terminal reports whether an event of kind k ends the job.
func (k EventKind) Terminal() bool {
	return k == EventJobDone || k == EventJobFailed || k == EventJobCancelled
}

// IsPartition reports whether an event of kind k is about one partition.
func (k EventKind) IsPartition() bool {
	return k >= EventPartitionQueued && k <= EventPartitionFailed
}

// PartitionState returns the state an event of kind k leaves its partition
// in (queued after a retry, as after EventPartitionQueued), or
// PartitionStateUnspecified when k is not about one partition. The daemon
// sets a partition's state from the event it sends, so the two never differ.
func (k EventKind) PartitionState() PartitionState {
	switch k {
	case EventPartitionQueued, EventPartitionRetried:
		return PartitionQueued
	case EventPartitionSynthesizing:
		return PartitionSynthesizing
	case EventPartitionProving:
		return PartitionProving
	case EventPartitionVerified:
		return PartitionVerified
	case EventPartitionFailed:
		return PartitionFailed
	}
	return PartitionStateUnspecified
}

// Limits on a submission, so that a malformed request fails with a clear message rather
// than tying the daemon up.
const (
	MaxPartitions     = 1 << 16
	MaxNameLength     = 256 // circuit names, device names
	MaxRequestIDBytes = 256
)

// SubmitRequest asks the daemon to prove one job.
type SubmitRequest struct {
	// Circuit names a circuit the daemon knows.
	Circuit string
	// Witnesses holds one gnark full witness (witness.MarshalBinary) per partition.
	Witnesses [][]byte
	// Assignments, instead of Witnesses, holds one wire assignment per partition:
	// every wire's value, solved elsewhere (docs/assignment.md). A request carries
	// one or the other.
	Assignments [][]byte
	// Class is the job's priority class; ClassUnspecified means ClassNormal.
	Class Class
	// RequestID makes Submit idempotent: the same id with the same content returns the
	// job already created, the same id with other content is an ErrConflict. Empty: every
	// Submit creates a job.
	RequestID string
}

// SubmitHeader describes a streamed submission (SubmitStream) before its bytes:
// the request without its inputs, and the size of each input.
type SubmitHeader struct {
	Circuit     string
	Class       Class
	RequestID   string
	Assignments bool    // the inputs are wire assignments, not witnesses
	InputSizes  []int64 // one per partition, in the order the bytes follow
}

// Noun is what the header's inputs are called in errors.
func (h SubmitHeader) Noun() string {
	if h.Assignments {
		return "wire assignment"
	}
	return "witness"
}

// countOf writes n inputs called noun ("witness", "wire assignment") in
// English: "1 witness", "65537 witnesses", "2 wire assignments".
func countOf(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Validate checks the header's shape as SubmitRequest.Validate checks a request's.
func (h SubmitHeader) Validate() error {
	if err := checkName("circuit", h.Circuit); err != nil {
		return err
	}
	if len(h.InputSizes) == 0 {
		return InvalidArgumentf("no witness: a job needs one witness per partition (or one wire assignment)")
	}
	if len(h.InputSizes) > MaxPartitions {
		return InvalidArgumentf("%s: a job holds at most %d partitions", countOf(len(h.InputSizes), h.Noun()), MaxPartitions)
	}
	for i, n := range h.InputSizes {
		if n < 0 {
			return InvalidArgumentf("%s %d is declared as more than %d bytes", h.Noun(), i, int64(math.MaxInt64))
		}
		if n == 0 {
			return InvalidArgumentf("%s %d is empty", h.Noun(), i)
		}
	}
	if !h.Class.Valid() {
		return InvalidArgumentf("unknown priority class %d", int(h.Class))
	}
	if len(h.RequestID) > MaxRequestIDBytes {
		return InvalidArgumentf("request id is %d bytes, at most %d allowed", len(h.RequestID), MaxRequestIDBytes)
	}
	return nil
}

// Validate checks the request's shape (not whether the circuit exists or the witnesses
// parse: that is the daemon's to say). The error wraps ErrInvalidArgument.
func (r SubmitRequest) Validate() error {
	if err := checkName("circuit", r.Circuit); err != nil {
		return err
	}
	if len(r.Witnesses) > 0 && len(r.Assignments) > 0 {
		return InvalidArgumentf("%s and %s: a job carries one or the other", countOf(len(r.Witnesses), "witness"), countOf(len(r.Assignments), "wire assignment"))
	}
	inputs, noun := r.Inputs()
	if len(inputs) == 0 {
		return InvalidArgumentf("no witness: a job needs one witness per partition (or one wire assignment)")
	}
	if len(inputs) > MaxPartitions {
		return InvalidArgumentf("%s: a job holds at most %d partitions", countOf(len(inputs), noun), MaxPartitions)
	}
	for i, w := range inputs {
		if len(w) == 0 {
			return InvalidArgumentf("%s %d is empty", noun, i)
		}
	}
	if !r.Class.Valid() {
		return InvalidArgumentf("unknown priority class %d", int(r.Class))
	}
	if len(r.RequestID) > MaxRequestIDBytes {
		return InvalidArgumentf("request id is %d bytes, at most %d allowed", len(r.RequestID), MaxRequestIDBytes)
	}
	return nil
}

// Inputs returns the request's partition inputs, its wire assignments if it has
// any, else its witnesses, and what they are called in errors ("witness" or "wire
// assignment").
func (r SubmitRequest) Inputs() ([][]byte, string) {
	if len(r.Assignments) > 0 {
		return r.Assignments, "wire assignment"
	}
	return r.Witnesses, "witness"
}

// Digest returns a SHA-256 over the request's content (circuit, class after OrNormal,
// witnesses or assignments), so the daemon can tell a retried Submit (same request id, same digest) from
// a reused request id (same id, other digest). The request id itself is not included.
func (r SubmitRequest) Digest() [32]byte {
	h := sha256.New()
	var n [8]byte
	writeField := func(b []byte) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	writeField([]byte(r.Circuit))
	writeField([]byte(r.Class.OrNormal().String()))
	binary.LittleEndian.PutUint64(n[:], uint64(len(r.Witnesses)))
	h.Write(n[:])
	for _, w := range r.Witnesses {
		writeField(w)
	}
	// Only a request with assignments adds them, so the digests of requests with
	// witnesses, which journals already hold, stay what they were.
	if len(r.Assignments) > 0 {
		writeField([]byte("assignments"))
		binary.LittleEndian.PutUint64(n[:], uint64(len(r.Assignments)))
		h.Write(n[:])
		for _, a := range r.Assignments {
			writeField(a)
		}
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// Job is a proof job as the daemon reports it.
type Job struct {
	ID         string
	RequestID  string
	Circuit    string
	Class      Class
	State      JobState
	Partitions []Partition
	CreatedAt  time.Time
	StartedAt  time.Time // zero until a partition starts
	FinishedAt time.Time // zero until the job ends
	// Error says why the job failed; empty otherwise.
	Error string
}

// Count returns the number of the job's partitions in state s.
func (j Job) Count(s PartitionState) int {
	n := 0
	for _, p := range j.Partitions {
		if p.State == s {
			n++
		}
	}
	return n
}

// WithoutOutputs returns a copy of j whose partitions carry no proof or public witness
// bytes (what List and the Await snapshot send).
func (j Job) WithoutOutputs() Job {
	parts := make([]Partition, len(j.Partitions))
	copy(parts, j.Partitions)
	for i := range parts {
		parts[i].Proof = nil
		parts[i].PublicWitness = nil
	}
	j.Partitions = parts
	return j
}

// Partition is one partition of a job.
type Partition struct {
	Index int
	State PartitionState
	// Attempts counts the times the partition was dispatched to a device.
	Attempts int
	// Device names the device of the latest attempt.
	Device string
	// Error holds the latest failure (of a retried attempt, or the final one).
	Error      string
	QueuedAt   time.Time
	SynthStart time.Time
	SynthEnd   time.Time
	ProveStart time.Time
	ProveEnd   time.Time
	VerifiedAt time.Time
	// Proof is the proof as gnark's Proof.WriteTo writes it; set when the job is done.
	Proof []byte
	// PublicWitness is the public witness (witness.MarshalBinary); set with Proof.
	PublicWitness []byte
}

// JobEvent is one step of a job, as Await delivers it.
type JobEvent struct {
	JobID string
	Kind  EventKind
	Time  time.Time
	// Partition, Attempt and Device are set on partition events.
	Partition int
	Attempt   int
	Device    string
	// Reason says why a partition was retried or failed, or why the job failed.
	Reason string
	// Job is set on EventSnapshot (without proof bytes) and on the terminal events.
	Job *Job
}

// ListFilter selects jobs for List.
type ListFilter struct {
	// State selects jobs in one state; JobStateUnspecified selects all.
	State JobState
	// Limit caps the number of jobs returned; 0 means the daemon's default.
	Limit int
}

// StatusReport is a snapshot of the daemon.
type StatusReport struct {
	// Queues has one entry per priority class, in priority order.
	Queues            []ClassQueue
	SynthesisRunning  int
	SynthesisCapacity int
	Devices           []DeviceStatus
	Budget            BudgetStatus
	Uptime            time.Duration
	Version           string
	// Journal is the state of the journal's storage.
	Journal JournalStatus
	// Cluster is the proving cluster as this host sees it; nil without
	// [cluster].
	Cluster *ClusterStatus
}

// ClusterStatus is the proving cluster as one of its hosts sees it: every
// host, this host's NATS connection, and the cluster's queue.
type ClusterStatus struct {
	Host       string // the host answering
	Prefix     string // the start of the cluster's names in NATS
	Connection ClusterConnection
	Hosts      []ClusterHost  // every host heard, this one included, by name
	Queues     []ClusterQueue // per priority class, in priority order
	// Oldest is when the oldest partition not yet done was queued; zero
	// when none waits.
	Oldest time.Time
	// QueueError says why the queue could not be read now (Queues is then
	// empty).
	QueueError string
}

// ClusterConnection is a host's NATS connection.
type ClusterConnection struct {
	State  string // connected, reconnecting, closed
	Since  time.Time
	Server string // without credentials
	// LastError is NATS's latest error, as NATS said it, kept after a
	// reconnection.
	LastError   string
	LastErrorAt time.Time
	Reconnects  int
}

// ClusterHost is one host of a cluster, from its presence messages.
type ClusterHost struct {
	Name     string
	Alive    bool // heard within the last few seconds
	LastSeen time.Time
	Keys     []string // circuits whose key is loaded on one of its healthy devices
	Free     int      // partitions it would take now
	Devices  []string // its devices, "(down)" after one not healthy
}

// ClusterQueue is one priority class's partitions in the cluster's queue.
type ClusterQueue struct {
	Class       Class
	Waiting     uint64 // queued, held by no host
	Held        uint64 // held by hosts, not yet done
	Redelivered uint64 // held after a redelivery (a host died, failed or handed it back)
	// Synthesized counts partitions a synthesis host solved that wait for a
	// proving host (beside Waiting, which counts those not solved yet).
	Synthesized uint64
}

// JournalStatus is the state of the journal's storage. While Writable is false
// (the disk is full) new jobs are refused with ResourceExhausted, no new
// partitions are taken, and proofs of accepted jobs wait in memory until they
// can be recorded; the daemon resumes by itself when space returns.
type JournalStatus struct {
	// Dir is the journal's directory (the state directory by default).
	Dir      string
	Writable bool
	// ShortSince is when it became short of space; zero when writable.
	ShortSince time.Time
	// LastError is the last storage error, kept after recovery.
	LastError string
	// WriteRetries counts writes retried after a space error since start.
	WriteRetries uint64
	// FreeBytes is the space free to the daemon's user in Dir.
	FreeBytes uint64
	// ReserveBytes is the reserve configured; ReserveHeld whether its file holds it now.
	ReserveBytes uint64
	ReserveHeld  bool
}

// ClassQueue is the waiting work of one priority class.
type ClassQueue struct {
	Class Class
	// Jobs counts the jobs with a partition not yet dispatched.
	Jobs int
	// Partitions counts the partitions not yet dispatched.
	Partitions int
}

// DeviceStatus describes one device and its backend process.
type DeviceStatus struct {
	Name        string
	Backend     string // the backend binary or plugin name
	Model       string // e.g. "NVIDIA H100 80GB HBM3"
	Kind        string // "gpu", "cpu", ...
	InFlight    int
	MaxInFlight int
	// BusyPercent is the share of the last minute the device reported busy, 0..100.
	BusyPercent  float64
	KeysResident []string
	Restarts     int
	Healthy      bool
	// Error says why the device is unhealthy.
	Error string
	// UtilizationPercent is the mean of the device's utilization samples over
	// the last minute, 0..100, measured as UtilizationSource says ("nvml": the
	// driver's share of time a kernel ran; "process-cpu": the CPU backend's CPU
	// time over its threads). With no samples UtilizationSource is empty and
	// UtilizationNote says why.
	UtilizationPercent float64
	UtilizationSource  string
	UtilizationNote    string
}

// BudgetStatus is the host memory budget.
type BudgetStatus struct {
	UsedBytes uint64
	// TotalBytes is the whole budget, CriticalReserveBytes the part only critical jobs may use.
	TotalBytes           uint64
	CriticalReserveBytes uint64
}

func checkName(what, s string) error {
	if s == "" {
		return InvalidArgumentf("%s name is empty", what)
	}
	if len(s) > MaxNameLength {
		return InvalidArgumentf("%s name is %d bytes, at most %d allowed", what, len(s), MaxNameLength)
	}
	return nil
}

func enumName[E ~int](names map[E]string, v E) string {
	if s, ok := names[v]; ok {
		return s
	}
	return fmt.Sprintf("%d", int(v))
}

// parseEnum looks s up among names, case-insensitively; the zero value (skip) is not a
// valid choice.
func parseEnum[E ~int](names map[E]string, s, what string, skip E) (E, error) {
	want := strings.ToLower(strings.TrimSpace(s))
	var choices []string
	for v := E(0); int(v) < len(names); v++ {
		if v == skip {
			continue
		}
		if names[v] == want {
			return v, nil
		}
		choices = append(choices, names[v])
	}
	return skip, fmt.Errorf("unknown %s %q (want one of %s)", what, s, strings.Join(choices, ", "))
}
