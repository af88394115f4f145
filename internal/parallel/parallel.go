// Package parallel spreads independent calls over the cores.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// ForEach calls fn(i) for every i in [0, n) on up to GOMAXPROCS goroutines
// and returns when all calls have. Reading thousands of small files is
// system calls and decoding that spread over the cores.
func ForEach(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), 8, (n+63)/64)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}
