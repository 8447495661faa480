package api

import (
	"reflect"
	"testing"
	"time"
)

func TestJobRoundTrip(t *testing.T) {
	t0 := time.Unix(1700000000, 123456789)
	job := Job{
		ID: "j1", RequestID: "r1", Circuit: "merkle", Class: ClassCritical, State: JobDone,
		CreatedAt: t0, StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(3 * time.Second), Error: "",
		Partitions: []Partition{
			{Index: 0, State: PartitionVerified, Attempts: 2, Device: "gpu0", Error: "backend crashed",
				QueuedAt: t0, SynthStart: t0.Add(1), SynthEnd: t0.Add(2), ProveStart: t0.Add(3), ProveEnd: t0.Add(4),
				VerifiedAt: t0.Add(5), Proof: []byte{1, 2}, PublicWitness: []byte{3}},
			{Index: 1, State: PartitionVerified, Attempts: 1, Device: "gpu1", QueuedAt: t0, Proof: []byte{4}, PublicWitness: []byte{5}},
		},
	}
	got := JobFromProto(JobProto(job))
	if !reflect.DeepEqual(got, job) {
		t.Errorf("job round trip:\n got %+v\nwant %+v", got, job)
	}
	// Zero times stay zero, not 1970.
	if j := JobFromProto(JobProto(Job{ID: "x"})); !j.CreatedAt.IsZero() || j.Partitions != nil {
		t.Errorf("empty job round trip = %+v", j)
	}
}

func TestEventRoundTrip(t *testing.T) {
	job := Job{ID: "j1", State: JobFailed, Error: "partition 3 failed"}
	for _, e := range []JobEvent{
		{JobID: "j1", Kind: EventPartitionRetried, Time: time.Unix(5, 0), Partition: 3, Attempt: 2, Device: "gpu1", Reason: "device lost"},
		{JobID: "j1", Kind: EventJobFailed, Time: time.Unix(6, 0), Reason: "partition 3 failed", Job: &job},
	} {
		if got := JobEventFromProto(JobEventProto(e)); !reflect.DeepEqual(got, e) {
			t.Errorf("event round trip:\n got %+v\nwant %+v", got, e)
		}
	}
}

func TestStatusAndFilterRoundTrip(t *testing.T) {
	s := StatusReport{
		Queues:           []ClassQueue{{Class: ClassCritical, Jobs: 1, Partitions: 10}, {Class: ClassLow}},
		SynthesisRunning: 3, SynthesisCapacity: 4,
		Devices: []DeviceStatus{{Name: "gpu0", Backend: "zkhost-backend-cuda", Model: "H100", Kind: "gpu", InFlight: 1,
			MaxInFlight: 2, BusyPercent: 97.5, KeysResident: []string{"merkle"}, Restarts: 1, Healthy: false, Error: "restarting"}},
		Budget:  BudgetStatus{UsedBytes: 1 << 30, TotalBytes: 64 << 30, CriticalReserveBytes: 8 << 30},
		Uptime:  90 * time.Minute,
		Version: "v0.1.0",
		Journal: JournalStatus{Dir: "/var/lib/zkhost", Writable: false, ShortSince: time.Unix(1700000000, 5),
			LastError: "no space left on device", WriteRetries: 7, FreeBytes: 4096, ReserveBytes: 64 << 20, ReserveHeld: false},
		Cluster: &ClusterStatus{Host: "h0", Prefix: "zkhost", Oldest: time.Unix(1700000000, 7), QueueError: "",
			Connection: ClusterConnection{State: "reconnecting", Since: time.Unix(1700000001, 0), Server: "nats://n1:4222",
				LastError: "nats: authorization violation", LastErrorAt: time.Unix(1700000002, 0), Reconnects: 2},
			Hosts: []ClusterHost{{Name: "h0", Alive: true, LastSeen: time.Unix(1700000003, 0), Keys: []string{"porep"}, Free: 2,
				Devices: []string{"gpu0", "gpu1 (down)"}}, {Name: "h1", LastSeen: time.Unix(1700000000, 0)}},
			Queues: []ClusterQueue{{Class: ClassCritical, Waiting: 3, Held: 2, Redelivered: 1, Synthesized: 5}}},
	}
	if got := StatusReportFromProto(StatusReportProto(s)); !reflect.DeepEqual(got, s) {
		t.Errorf("status round trip:\n got %+v\nwant %+v", got, s)
	}
	f := ListFilter{State: JobRunning, Limit: 20}
	if got := ListFilterFromProto(ListRequestProto(f)); got != f {
		t.Errorf("filter round trip = %+v", got)
	}
	r := SubmitRequest{Circuit: "c", Witnesses: [][]byte{{1}}, Class: ClassHigh, RequestID: "id"}
	if got := SubmitRequestFromProto(SubmitRequestProto(r)); !reflect.DeepEqual(got, r) {
		t.Errorf("submit round trip = %+v", got)
	}
	r = SubmitRequest{Circuit: "c", Assignments: [][]byte{{1}, {2}}}
	if got := SubmitRequestFromProto(SubmitRequestProto(r)); !reflect.DeepEqual(got, r) {
		t.Errorf("submit round trip with assignments = %+v", got)
	}
}
