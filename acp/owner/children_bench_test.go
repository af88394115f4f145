package owner

import (
	"testing"
	"time"
)

// BenchmarkBulkTurn is a /bulk 100000 turn from the prompt to its last
// line on disk, the demo agent in this process, in the parent and inside
// a child (whose lines are the child's, tagged with its id): the child's
// should cost at most 1.5x the parent's. The two alternate, each on a
// session of its own, so that a machine busy with something else slows
// both alike; child/parent is their ratio, parent-ms and child-ms each
// turn's time (scripts/bench.sh's table compares their medians).
func BenchmarkBulkTurn(b *testing.B) {
	r := newRig(b)
	turns := map[string]string{"parent": "/bulk 100000", "child": "/subagent bulk /bulk 100000"}
	ids := map[string]string{}
	for name := range turns {
		ids[name] = r.create("/say ready")
		r.mustRun(r.job(ids[name], ""))
	}
	spent := map[string]time.Duration{}
	order := []string{"parent", "child"}
	for b.Loop() {
		for _, name := range order {
			t0 := time.Now()
			r.mustRun(r.job(ids[name], turns[name]))
			spent[name] += time.Since(t0)
		}
		order[0], order[1] = order[1], order[0]
	}
	n := float64(b.N)
	b.ReportMetric(float64(spent["parent"].Milliseconds())/n, "parent-ms")
	b.ReportMetric(float64(spent["child"].Milliseconds())/n, "child-ms")
	b.ReportMetric(float64(spent["child"])/float64(spent["parent"]), "child/parent")
}
