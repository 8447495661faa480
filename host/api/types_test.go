package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
)

// The Go enums convert to the proto enums by value; this holds the two lists together.
func TestEnumsMatchProto(t *testing.T) {
	check := func(what string, protoNames map[int32]string, prefix string, goName func(int) string) {
		t.Helper()
		for v, pname := range protoNames {
			want := strings.ToLower(strings.TrimPrefix(pname, prefix))
			if got := goName(int(v)); got != want {
				t.Errorf("%s %d: Go name %q, proto name %q", what, v, got, pname)
			}
		}
	}
	check("class", zkhostv1.PriorityClass_name, "PRIORITY_CLASS_", func(v int) string { return Class(v).String() })
	check("job state", zkhostv1.JobState_name, "JOB_STATE_", func(v int) string { return JobState(v).String() })
	check("partition state", zkhostv1.PartitionState_name, "PARTITION_STATE_", func(v int) string { return PartitionState(v).String() })
	check("event kind", zkhostv1.EventKind_name, "EVENT_KIND_", func(v int) string {
		// Partition events drop their prefix in Go ("verified"), job events keep it.
		if k := EventKind(v); k.IsPartition() {
			return "partition_" + k.String()
		}
		return EventKind(v).String()
	})
	if len(classNames) != len(zkhostv1.PriorityClass_name) || len(jobStateNames) != len(zkhostv1.JobState_name) ||
		len(partitionStateNames) != len(zkhostv1.PartitionState_name) || len(eventKindNames) != len(zkhostv1.EventKind_name) {
		t.Error("a Go enum and its proto enum have different numbers of values")
	}
}

// TestEventPartitionState: every partition event leaves its partition in the
// state its name says (a retry queues it again); no other event names one.
func TestEventPartitionState(t *testing.T) {
	for k := range eventKindNames {
		want := PartitionStateUnspecified
		switch {
		case k == EventPartitionRetried:
			want = PartitionQueued
		case k.IsPartition():
			s, err := parseEnum(partitionStateNames, k.String(), "partition state", PartitionStateUnspecified)
			if err != nil {
				t.Errorf("partition event %s: %v", k, err)
			}
			want = s
		}
		if got := k.PartitionState(); got != want {
			t.Errorf("%s leaves its partition %s, want %s", k, got, want)
		}
	}
}

func TestParseClassAndState(t *testing.T) {
	for _, c := range Classes {
		got, err := ParseClass(strings.ToUpper(c.String()))
		if err != nil || got != c {
			t.Errorf("ParseClass(%q) = %v, %v", c, got, err)
		}
	}
	if _, err := ParseClass("urgent"); err == nil || !strings.Contains(err.Error(), "critical, high, normal, low") {
		t.Errorf("ParseClass(urgent) error = %v, want the choices listed", err)
	}
	if _, err := ParseClass("unspecified"); err == nil {
		t.Error("ParseClass(unspecified) accepted the zero value")
	}
	if s, err := ParseJobState("done"); err != nil || s != JobDone {
		t.Errorf("ParseJobState(done) = %v, %v", s, err)
	}
	if _, err := ParseJobState("finished"); err == nil {
		t.Error("ParseJobState(finished) accepted")
	}
	if ClassUnspecified.OrNormal() != ClassNormal || ClassLow.OrNormal() != ClassLow {
		t.Error("OrNormal")
	}
	// The scheduler's order and per-class arrays: the four classes, critical first.
	for i, c := range Classes {
		if c.Index() != i || !c.Specified() || !c.Valid() {
			t.Errorf("%s: Index %d, Specified %v, Valid %v", c, c.Index(), c.Specified(), c.Valid())
		}
	}
	if len(Classes) != NumClasses {
		t.Errorf("%d classes listed, NumClasses %d", len(Classes), NumClasses)
	}
	if ClassUnspecified.Specified() || Class(5).Specified() || Class(-1).Specified() || Class(5).Valid() {
		t.Error("Specified or Valid accepts what is not a class")
	}
	if !ClassUnspecified.Valid() {
		t.Error("a request without a class is not Valid")
	}
	if Class(9).String() != "9" {
		t.Errorf("unknown class prints %q", Class(9).String())
	}
}

func TestSubmitRequestValidate(t *testing.T) {
	w := []byte{1, 2, 3}
	tests := []struct {
		name string
		req  SubmitRequest
		want string // substring of the error; empty: valid
	}{
		{"ok", SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{w, w}}, ""},
		{"ok critical", SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{w}, Class: ClassCritical, RequestID: "r1"}, ""},
		{"no circuit", SubmitRequest{Witnesses: [][]byte{w}}, "circuit name is empty"},
		{"long circuit", SubmitRequest{Circuit: strings.Repeat("c", MaxNameLength+1), Witnesses: [][]byte{w}}, "circuit name is 257 bytes"},
		{"no witness", SubmitRequest{Circuit: "merkle"}, "no witness"},
		{"empty witness", SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{w, {}}}, "witness 1 is empty"},
		{"bad class", SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{w}, Class: 7}, "unknown priority class 7"},
		{"long request id", SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{w}, RequestID: strings.Repeat("r", MaxRequestIDBytes+1)}, "request id"},
		{"ok assignments", SubmitRequest{Circuit: "merkle", Assignments: [][]byte{w}}, ""},
		{"witnesses and assignments", SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{w}, Assignments: [][]byte{w}}, "1 witness and 1 wire assignment: a job carries one or the other"},
		{"witnesses and assignments, plural", SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{w, w}, Assignments: [][]byte{w, w}}, "2 witnesses and 2 wire assignments: a job"},
		{"too many witnesses", SubmitRequest{Circuit: "merkle", Witnesses: make([][]byte, MaxPartitions+1)}, "65537 witnesses: a job holds at most"},
		{"empty assignment", SubmitRequest{Circuit: "merkle", Assignments: [][]byte{w, w, {}}}, "wire assignment 2 is empty"},
		{"too many assignments", SubmitRequest{Circuit: "merkle", Assignments: make([][]byte, MaxPartitions+1)}, "65537 wire assignments: a job holds at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("Validate = %v, want ErrInvalidArgument containing %q", err, tt.want)
			}
		})
	}
}

// TestSubmitHeaderValidateCounts: the streamed header's errors count its
// inputs in English ("65537 witnesses", not "witnesss").
func TestSubmitHeaderValidateCounts(t *testing.T) {
	for _, tt := range []struct {
		h    SubmitHeader
		want string
	}{
		{SubmitHeader{Circuit: "merkle", InputSizes: make([]int64, MaxPartitions+1)}, "65537 witnesses: a job holds at most"},
		{SubmitHeader{Circuit: "merkle", Assignments: true, InputSizes: make([]int64, MaxPartitions+1)}, "65537 wire assignments: a job holds at most"},
	} {
		if err := tt.h.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate = %v, want %q", err, tt.want)
		}
	}
}

func TestSubmitRequestDigest(t *testing.T) {
	base := SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{{1, 2}, {3}}, RequestID: "a"}
	same := base
	same.RequestID = "b"
	same.Class = ClassNormal // unspecified means normal
	if base.Digest() != same.Digest() {
		t.Error("digest depends on the request id or on unspecified vs normal")
	}
	variants := []SubmitRequest{
		{Circuit: "merkle2", Witnesses: base.Witnesses},
		{Circuit: "merkle", Witnesses: [][]byte{{1}, {2, 3}}}, // same bytes, other split
		{Circuit: "merkle", Witnesses: [][]byte{{1, 2}, {4}}},
		{Circuit: "merkle", Witnesses: base.Witnesses, Class: ClassHigh},
		{Circuit: "merkle", Witnesses: base.Witnesses[:1]},
		{Circuit: "merkle", Assignments: base.Witnesses}, // the same bytes as assignments
	}
	for i, v := range variants {
		if v.Digest() == base.Digest() {
			t.Errorf("variant %d has the same digest as the base request", i)
		}
	}
}

func TestJobHelpers(t *testing.T) {
	j := Job{Partitions: []Partition{
		{State: PartitionVerified, Proof: []byte{1}, PublicWitness: []byte{2}},
		{State: PartitionQueued},
		{State: PartitionVerified, Proof: []byte{3}},
	}}
	if j.Count(PartitionVerified) != 2 || j.Count(PartitionQueued) != 1 || j.Count(PartitionFailed) != 0 {
		t.Errorf("Count wrong")
	}
	s := j.WithoutOutputs()
	for _, p := range s.Partitions {
		if p.Proof != nil || p.PublicWitness != nil {
			t.Error("WithoutOutputs left bytes")
		}
	}
	if j.Partitions[0].Proof == nil || j.Partitions[2].Proof == nil {
		t.Error("WithoutOutputs changed the original job")
	}
	if !JobDone.Terminal() || !JobCancelled.Terminal() || JobRunning.Terminal() {
		t.Error("JobState.Terminal")
	}
	for s := range jobStateNames {
		if k := s.EndEvent(); k.Terminal() != s.Terminal() || (s.Terminal() && k == EventUnspecified) {
			t.Errorf("%s.EndEvent() = %s", s, k)
		}
	}
	if JobDone.EndEvent() != EventJobDone || JobFailed.EndEvent() != EventJobFailed || JobCancelled.EndEvent() != EventJobCancelled {
		t.Error("JobState.EndEvent")
	}
	if !EventJobFailed.Terminal() || EventPartitionFailed.Terminal() || !EventPartitionRetried.IsPartition() || EventSnapshot.IsPartition() {
		t.Error("EventKind predicates")
	}
}

func TestEnumJSON(t *testing.T) {
	in := Job{Class: ClassCritical, State: JobCancelled, Partitions: []Partition{{State: PartitionSynthesizing}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Class":"critical"`, `"State":"cancelled"`, `"State":"synthesizing"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	var out Job
	if err := json.Unmarshal(b, &out); err != nil || out.Class != ClassCritical || out.State != JobCancelled ||
		out.Partitions[0].State != PartitionSynthesizing {
		t.Errorf("JSON round trip = %+v, %v", out, err)
	}
	var k EventKind
	if err := k.UnmarshalText([]byte("nonsense")); err == nil {
		t.Error("unknown event kind accepted")
	}
}
