package api

import (
	"math"
	"time"

	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
)

// The conversions below translate between the plain Go types and the wire types of
// proto/zkhost/v1. The Go enums use the same numbers as the proto enums (a test holds
// them together), so an enum converts by value; a value this version does not know
// survives the trip and prints as its number. Requests are validated where they are
// served (SubmitRequest.Validate), not here. The functions are alike in shape,
// deliberately: each copies one message's fields by name, which the compiler
// checks, where a generic or reflective copy would hide a field left out.

// SubmitRequestProto returns r on the wire.
func SubmitRequestProto(r SubmitRequest) *zkhostv1.SubmitRequest {
	return &zkhostv1.SubmitRequest{
		Circuit:     r.Circuit,
		Witnesses:   r.Witnesses,
		Assignments: r.Assignments,
		Class:       zkhostv1.PriorityClass(r.Class),
		RequestId:   r.RequestID,
	}
}

// SubmitRequestFromProto returns the request p carries.
func SubmitRequestFromProto(p *zkhostv1.SubmitRequest) SubmitRequest {
	return SubmitRequest{
		Circuit:     p.GetCircuit(),
		Witnesses:   p.GetWitnesses(),
		Assignments: p.GetAssignments(),
		Class:       Class(p.GetClass()),
		RequestID:   p.GetRequestId(),
	}
}

// SubmitHeaderProto returns h on the wire.
func SubmitHeaderProto(h SubmitHeader) *zkhostv1.SubmitHeader {
	p := &zkhostv1.SubmitHeader{
		Circuit:     h.Circuit,
		Class:       zkhostv1.PriorityClass(h.Class),
		RequestId:   h.RequestID,
		Assignments: h.Assignments,
		InputSizes:  make([]uint64, len(h.InputSizes)),
	}
	for i, n := range h.InputSizes {
		p.InputSizes[i] = uint64(n)
	}
	return p
}

// SubmitHeaderFromProto returns the header p carries. A size beyond int64 becomes
// -1, which Validate refuses.
func SubmitHeaderFromProto(p *zkhostv1.SubmitHeader) SubmitHeader {
	h := SubmitHeader{
		Circuit:     p.GetCircuit(),
		Class:       Class(p.GetClass()),
		RequestID:   p.GetRequestId(),
		Assignments: p.GetAssignments(),
		InputSizes:  make([]int64, len(p.GetInputSizes())),
	}
	for i, n := range p.GetInputSizes() {
		if n > math.MaxInt64 {
			h.InputSizes[i] = -1
		} else {
			h.InputSizes[i] = int64(n)
		}
	}
	return h
}

// JobProto returns j on the wire.
func JobProto(j Job) *zkhostv1.Job {
	p := &zkhostv1.Job{
		Id:               j.ID,
		RequestId:        j.RequestID,
		Circuit:          j.Circuit,
		Class:            zkhostv1.PriorityClass(j.Class),
		State:            zkhostv1.JobState(j.State),
		CreatedUnixNano:  unixNano(j.CreatedAt),
		StartedUnixNano:  unixNano(j.StartedAt),
		FinishedUnixNano: unixNano(j.FinishedAt),
		Error:            j.Error,
		Partitions:       make([]*zkhostv1.Partition, len(j.Partitions)),
	}
	for i, pt := range j.Partitions {
		p.Partitions[i] = &zkhostv1.Partition{
			Index:              uint32(pt.Index),
			State:              zkhostv1.PartitionState(pt.State),
			Attempts:           uint32(pt.Attempts),
			Device:             pt.Device,
			Error:              pt.Error,
			QueuedUnixNano:     unixNano(pt.QueuedAt),
			SynthStartUnixNano: unixNano(pt.SynthStart),
			SynthEndUnixNano:   unixNano(pt.SynthEnd),
			ProveStartUnixNano: unixNano(pt.ProveStart),
			ProveEndUnixNano:   unixNano(pt.ProveEnd),
			VerifiedUnixNano:   unixNano(pt.VerifiedAt),
			Proof:              pt.Proof,
			PublicWitness:      pt.PublicWitness,
		}
	}
	return p
}

// JobFromProto returns the job p carries.
func JobFromProto(p *zkhostv1.Job) Job {
	j := Job{
		ID:         p.GetId(),
		RequestID:  p.GetRequestId(),
		Circuit:    p.GetCircuit(),
		Class:      Class(p.GetClass()),
		State:      JobState(p.GetState()),
		CreatedAt:  fromUnixNano(p.GetCreatedUnixNano()),
		StartedAt:  fromUnixNano(p.GetStartedUnixNano()),
		FinishedAt: fromUnixNano(p.GetFinishedUnixNano()),
		Error:      p.GetError(),
	}
	if n := len(p.GetPartitions()); n > 0 {
		j.Partitions = make([]Partition, n)
	}
	for i, pt := range p.GetPartitions() {
		j.Partitions[i] = Partition{
			Index:         int(pt.GetIndex()),
			State:         PartitionState(pt.GetState()),
			Attempts:      int(pt.GetAttempts()),
			Device:        pt.GetDevice(),
			Error:         pt.GetError(),
			QueuedAt:      fromUnixNano(pt.GetQueuedUnixNano()),
			SynthStart:    fromUnixNano(pt.GetSynthStartUnixNano()),
			SynthEnd:      fromUnixNano(pt.GetSynthEndUnixNano()),
			ProveStart:    fromUnixNano(pt.GetProveStartUnixNano()),
			ProveEnd:      fromUnixNano(pt.GetProveEndUnixNano()),
			VerifiedAt:    fromUnixNano(pt.GetVerifiedUnixNano()),
			Proof:         pt.GetProof(),
			PublicWitness: pt.GetPublicWitness(),
		}
	}
	return j
}

// JobEventProto returns e on the wire.
func JobEventProto(e JobEvent) *zkhostv1.JobEvent {
	p := &zkhostv1.JobEvent{
		JobId:        e.JobID,
		Kind:         zkhostv1.EventKind(e.Kind),
		TimeUnixNano: unixNano(e.Time),
		Partition:    uint32(e.Partition),
		Attempt:      uint32(e.Attempt),
		Device:       e.Device,
		Reason:       e.Reason,
	}
	if e.Job != nil {
		p.Job = JobProto(*e.Job)
	}
	return p
}

// JobEventFromProto returns the event p carries.
func JobEventFromProto(p *zkhostv1.JobEvent) JobEvent {
	e := JobEvent{
		JobID:     p.GetJobId(),
		Kind:      EventKind(p.GetKind()),
		Time:      fromUnixNano(p.GetTimeUnixNano()),
		Partition: int(p.GetPartition()),
		Attempt:   int(p.GetAttempt()),
		Device:    p.GetDevice(),
		Reason:    p.GetReason(),
	}
	if p.GetJob() != nil {
		j := JobFromProto(p.GetJob())
		e.Job = &j
	}
	return e
}

// ListRequestProto returns f on the wire.
func ListRequestProto(f ListFilter) *zkhostv1.ListRequest {
	limit := f.Limit
	if limit < 0 {
		limit = 0
	}
	return &zkhostv1.ListRequest{State: zkhostv1.JobState(f.State), Limit: uint32(limit)}
}

// ListFilterFromProto returns the filter p carries.
func ListFilterFromProto(p *zkhostv1.ListRequest) ListFilter {
	return ListFilter{State: JobState(p.GetState()), Limit: int(p.GetLimit())}
}

// StatusReportProto returns s on the wire.
func StatusReportProto(s StatusReport) *zkhostv1.StatusReport {
	p := &zkhostv1.StatusReport{
		SynthesisRunning:  uint32(s.SynthesisRunning),
		SynthesisCapacity: uint32(s.SynthesisCapacity),
		Budget: &zkhostv1.BudgetStatus{
			UsedBytes:            s.Budget.UsedBytes,
			TotalBytes:           s.Budget.TotalBytes,
			CriticalReserveBytes: s.Budget.CriticalReserveBytes,
		},
		UptimeNanos: int64(s.Uptime),
		Version:     s.Version,
		Journal: &zkhostv1.JournalStatus{
			Dir:                s.Journal.Dir,
			Writable:           s.Journal.Writable,
			ShortSinceUnixNano: unixNano(s.Journal.ShortSince),
			LastError:          s.Journal.LastError,
			WriteRetries:       s.Journal.WriteRetries,
			FreeBytes:          s.Journal.FreeBytes,
			ReserveBytes:       s.Journal.ReserveBytes,
			ReserveHeld:        s.Journal.ReserveHeld,
		},
	}
	for _, q := range s.Queues {
		p.Queues = append(p.Queues, &zkhostv1.ClassQueue{
			Class:      zkhostv1.PriorityClass(q.Class),
			Jobs:       uint32(q.Jobs),
			Partitions: uint32(q.Partitions),
		})
	}
	for _, d := range s.Devices {
		p.Devices = append(p.Devices, deviceStatusProto(d))
	}
	p.Cluster = clusterStatusProto(s.Cluster)
	return p
}

func clusterStatusProto(c *ClusterStatus) *zkhostv1.ClusterStatus {
	if c == nil {
		return nil
	}
	p := &zkhostv1.ClusterStatus{
		Host: c.Host, Prefix: c.Prefix, OldestUnixNano: unixNano(c.Oldest), QueueError: c.QueueError,
		Connection: &zkhostv1.ClusterConnection{
			State: c.Connection.State, SinceUnixNano: unixNano(c.Connection.Since), Server: c.Connection.Server,
			LastError: c.Connection.LastError, LastErrorUnixNano: unixNano(c.Connection.LastErrorAt),
			Reconnects: uint32(c.Connection.Reconnects),
		},
	}
	for _, h := range c.Hosts {
		p.Hosts = append(p.Hosts, &zkhostv1.ClusterHost{Name: h.Name, Alive: h.Alive, LastSeenUnixNano: unixNano(h.LastSeen),
			Keys: h.Keys, Free: int32(h.Free), Devices: h.Devices})
	}
	for _, q := range c.Queues {
		p.Queues = append(p.Queues, &zkhostv1.ClusterQueue{Class: zkhostv1.PriorityClass(q.Class), Waiting: q.Waiting, Held: q.Held, Redelivered: q.Redelivered, Synthesized: q.Synthesized})
	}
	return p
}

func clusterStatusFromProto(p *zkhostv1.ClusterStatus) *ClusterStatus {
	if p == nil {
		return nil
	}
	pc := p.GetConnection()
	c := &ClusterStatus{
		Host: p.GetHost(), Prefix: p.GetPrefix(), Oldest: fromUnixNano(p.GetOldestUnixNano()), QueueError: p.GetQueueError(),
		Connection: ClusterConnection{
			State: pc.GetState(), Since: fromUnixNano(pc.GetSinceUnixNano()), Server: pc.GetServer(),
			LastError: pc.GetLastError(), LastErrorAt: fromUnixNano(pc.GetLastErrorUnixNano()), Reconnects: int(pc.GetReconnects()),
		},
	}
	for _, h := range p.GetHosts() {
		c.Hosts = append(c.Hosts, ClusterHost{Name: h.GetName(), Alive: h.GetAlive(), LastSeen: fromUnixNano(h.GetLastSeenUnixNano()),
			Keys: h.GetKeys(), Free: int(h.GetFree()), Devices: h.GetDevices()})
	}
	for _, q := range p.GetQueues() {
		c.Queues = append(c.Queues, ClusterQueue{Class: Class(q.GetClass()), Waiting: q.GetWaiting(), Held: q.GetHeld(), Redelivered: q.GetRedelivered(), Synthesized: q.GetSynthesized()})
	}
	return c
}

// StatusReportFromProto returns the report p carries.
func StatusReportFromProto(p *zkhostv1.StatusReport) StatusReport {
	s := StatusReport{
		SynthesisRunning:  int(p.GetSynthesisRunning()),
		SynthesisCapacity: int(p.GetSynthesisCapacity()),
		Budget: BudgetStatus{
			UsedBytes:            p.GetBudget().GetUsedBytes(),
			TotalBytes:           p.GetBudget().GetTotalBytes(),
			CriticalReserveBytes: p.GetBudget().GetCriticalReserveBytes(),
		},
		Uptime:  time.Duration(p.GetUptimeNanos()),
		Version: p.GetVersion(),
		Journal: JournalStatus{
			Dir:          p.GetJournal().GetDir(),
			Writable:     p.GetJournal().GetWritable(),
			ShortSince:   fromUnixNano(p.GetJournal().GetShortSinceUnixNano()),
			LastError:    p.GetJournal().GetLastError(),
			WriteRetries: p.GetJournal().GetWriteRetries(),
			FreeBytes:    p.GetJournal().GetFreeBytes(),
			ReserveBytes: p.GetJournal().GetReserveBytes(),
			ReserveHeld:  p.GetJournal().GetReserveHeld(),
		},
	}
	for _, q := range p.GetQueues() {
		s.Queues = append(s.Queues, ClassQueue{
			Class:      Class(q.GetClass()),
			Jobs:       int(q.GetJobs()),
			Partitions: int(q.GetPartitions()),
		})
	}
	for _, d := range p.GetDevices() {
		s.Devices = append(s.Devices, DeviceStatusFromProto(d))
	}
	s.Cluster = clusterStatusFromProto(p.GetCluster())
	return s
}

func deviceStatusProto(d DeviceStatus) *zkhostv1.DeviceStatus {
	return &zkhostv1.DeviceStatus{
		Name:         d.Name,
		Backend:      d.Backend,
		Model:        d.Model,
		Kind:         d.Kind,
		InFlight:     uint32(d.InFlight),
		MaxInFlight:  uint32(d.MaxInFlight),
		BusyPercent:  d.BusyPercent,
		KeysResident: d.KeysResident,
		Restarts:     uint32(d.Restarts),
		Healthy:      d.Healthy,
		Error:        d.Error,

		UtilizationPercent: d.UtilizationPercent,
		UtilizationSource:  d.UtilizationSource,
		UtilizationNote:    d.UtilizationNote,
	}
}

// DeviceStatusFromProto returns the device status p carries.
func DeviceStatusFromProto(d *zkhostv1.DeviceStatus) DeviceStatus {
	return DeviceStatus{
		Name:         d.GetName(),
		Backend:      d.GetBackend(),
		Model:        d.GetModel(),
		Kind:         d.GetKind(),
		InFlight:     int(d.GetInFlight()),
		MaxInFlight:  int(d.GetMaxInFlight()),
		BusyPercent:  d.GetBusyPercent(),
		KeysResident: d.GetKeysResident(),
		Restarts:     int(d.GetRestarts()),
		Healthy:      d.GetHealthy(),
		Error:        d.GetError(),

		UtilizationPercent: d.GetUtilizationPercent(),
		UtilizationSource:  d.GetUtilizationSource(),
		UtilizationNote:    d.GetUtilizationNote(),
	}
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
