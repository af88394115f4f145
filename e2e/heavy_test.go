package e2e_test

import (
	"strings"
	"sync"
	"testing"
)

// The real agents of the npm suites are heavy: an OpenCode launch alone is
// about 4.4 s of CPU, a Claude or Gemini one 2 to 4 s. Twelve tests at once
// on two cores launched enough of them that OpenCode missed its 60 s
// initialize and its tests timed out (CI, stop 50: 12 failures, all real
// agents). A test takes agentTokens' tokens for its real agent before it
// starts it, and gives them back when it ends; the demo-agent tests run
// beside them as before.
const agentTokens = 4

var heavy = struct {
	acquire sync.Mutex // one test gathers its tokens at a time: no deadlock
	tokens  chan struct{}
	mu      sync.Mutex
	holders map[string]bool // tests (by name) that hold tokens
}{tokens: make(chan struct{}, agentTokens), holders: map[string]bool{}}

// heavyAgent waits for weight tokens (at most agentTokens) before the test
// starts a real agent; a test, or a subtest of one, that holds tokens
// already does not wait again.
func heavyAgent(t *testing.T, weight int) {
	t.Helper()
	name := t.Name()
	heavy.mu.Lock()
	for holder := range heavy.holders {
		if name == holder || strings.HasPrefix(name, holder+"/") {
			heavy.mu.Unlock()
			return
		}
	}
	heavy.holders[name] = true
	heavy.mu.Unlock()
	weight = min(max(weight, 1), agentTokens)
	heavy.acquire.Lock()
	for range weight {
		heavy.tokens <- struct{}{}
	}
	heavy.acquire.Unlock()
	t.Cleanup(func() {
		for range weight {
			<-heavy.tokens
		}
		heavy.mu.Lock()
		delete(heavy.holders, name)
		heavy.mu.Unlock()
	})
}
