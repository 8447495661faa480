package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// Names of a partition message's parts; the names in NATS are in names.go.
const (
	// headers of a partition message
	hdrPartition = "Zkhost-Partition"
	hdrInput     = "Zkhost-Input" // "witness" or "assignment"
	inputAssign  = "assignment"
	// hdrSynthesizedBy names the synthesis host that solved a synthesized
	// partition (synthesis.go).
	hdrSynthesizedBy = "Zkhost-Synthesized-By"
)

func jobKey(id string) string            { return "job." + id }
func proofKey(id string, idx int) string { return "proof." + id + "." + strconv.Itoa(idx) }

// failKey counts the failed deliveries of a partition (worker.go).
func failKey(id string, idx int) string { return "fail." + id + "." + strconv.Itoa(idx) }

// reqKey is the key of a request id, scoped by owner as the journal scopes it.
func reqKey(owner, reqID string) string {
	sum := sha256.Sum256([]byte(owner + "\x00" + reqID))
	return "req." + hex.EncodeToString(sum[:])
}

// jobRecord is a job as the bucket holds it: the cluster's truth about it.
type jobRecord struct {
	ID         string    `json:"id"`
	RequestID  string    `json:"request_id,omitempty"`
	Owner      string    `json:"owner,omitempty"`
	Digest     string    `json:"digest"`
	Circuit    string    `json:"circuit"`
	Class      api.Class `json:"class"`
	Partitions int       `json:"partitions"`
	State      string    `json:"state"`
	Error      string    `json:"error,omitempty"`
	// Verified has bit i set once partition i's proof is recorded.
	Verified []byte `json:"verified"`
	// Objects has bit i set when partition i's input is in the object store
	// (inputs.go), not in its message.
	Objects  []byte    `json:"objects,omitempty"`
	Host     string    `json:"host"` // the host that accepted it
	Created  time.Time `json:"created"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
}

func newJobRecord(id string, req api.SubmitRequest, owner, host string) *jobRecord {
	inputs, _ := req.Inputs()
	d := req.Digest()
	return &jobRecord{
		ID: id, RequestID: req.RequestID, Owner: owner, Digest: hex.EncodeToString(d[:]),
		Circuit: req.Circuit, Class: req.Class.OrNormal(), Partitions: len(inputs),
		State: api.JobQueued.String(), Verified: make([]byte, (len(inputs)+7)/8), Host: host,
		Created: time.Now(),
	}
}

func (r *jobRecord) state() api.JobState {
	s, err := api.ParseJobState(r.State)
	if err != nil {
		return api.JobStateUnspecified
	}
	return s
}

// bitSet reports bit i of the bitmap b (false beyond its end).
func bitSet(b []byte, i int) bool { return i >= 0 && i/8 < len(b) && b[i/8]&(1<<(i%8)) != 0 }

// setBit sets bit i of the bitmap b.
func setBit(b []byte, i int) { b[i/8] |= 1 << (i % 8) }

func (r *jobRecord) verified(i int) bool { return bitSet(r.Verified, i) }

func (r *jobRecord) setVerified(i int) { setBit(r.Verified, i) }

// markObjects sets the Objects bit of every input larger than inline bytes.
func (r *jobRecord) markObjects(inputs [][]byte, inline int) {
	r.Objects = nil
	for i, in := range inputs {
		if len(in) > inline {
			if r.Objects == nil {
				r.Objects = make([]byte, (len(inputs)+7)/8)
			}
			setBit(r.Objects, i)
		}
	}
}

func (r *jobRecord) inObject(i int) bool { return bitSet(r.Objects, i) }

func (r *jobRecord) countVerified() int {
	n := 0
	for i := range r.Partitions {
		if r.verified(i) {
			n++
		}
	}
	return n
}

func decodeJob(b []byte) (*jobRecord, error) {
	var r jobRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("job record: %w", err)
	}
	if r.Partitions <= 0 || len(r.Verified) != (r.Partitions+7)/8 {
		return nil, fmt.Errorf("job record %s: %d partitions but %d bytes of verified bits", r.ID, r.Partitions, len(r.Verified))
	}
	return &r, nil
}

// view is the job as the API shows it, without proofs.
func (r *jobRecord) view() api.Job {
	j := api.Job{
		ID: r.ID, RequestID: r.RequestID, Circuit: r.Circuit, Class: r.Class, State: r.state(),
		CreatedAt: r.Created, StartedAt: r.Started, FinishedAt: r.Finished, Error: r.Error,
		Partitions: make([]api.Partition, r.Partitions),
	}
	for i := range j.Partitions {
		p := &j.Partitions[i]
		p.Index = i
		p.State = j.State.RecordedPartitionState(r.verified(i))
	}
	return j
}

// proofRecord is one partition's verified proof.
type proofRecord struct {
	Proof    []byte    `json:"proof"`
	Public   []byte    `json:"public"`
	Host     string    `json:"host"`
	Device   string    `json:"device"`
	Attempts int       `json:"attempts"`
	At       time.Time `json:"at"`
	// ProveStart and ProveEnd bound the prove call on the host's device, as
	// the host's own job recorded them.
	ProveStart time.Time `json:"prove_start,omitzero"`
	ProveEnd   time.Time `json:"prove_end,omitzero"`
	// SynthesizedBy is the synthesis host that solved the partition; empty
	// when the proving host did, or the job carried wire assignments.
	SynthesizedBy string `json:"synthesized_by,omitempty"`
}

// reqRecord ties a request id to its job.
type reqRecord struct {
	JobID  string `json:"job"`
	Digest string `json:"digest"`
}
