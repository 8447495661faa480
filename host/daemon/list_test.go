package daemon

import (
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestListNewestFirst: List returns the newest jobs first, as the API says, and
// its limit keeps the newest.
func TestListNewestFirst(t *testing.T) {
	f := start(t, opts{})
	ctx := testCtx(t, time.Minute)
	var ids []string
	for i := range 3 {
		job := f.submit(ctx, small, api.ClassNormal, witnesses(t, small, 1, uint64(200+i)))
		ids = append(ids, job.ID)
	}
	for _, id := range ids {
		f.await(ctx, id)
	}
	jobs, err := f.c.List(ctx, api.ListFilter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != ids[2] || jobs[1].ID != ids[1] {
		var got []string
		for _, j := range jobs {
			got = append(got, j.ID)
		}
		t.Fatalf("List = %v, want the newest two first: %v", got, []string{ids[2], ids[1]})
	}
}
