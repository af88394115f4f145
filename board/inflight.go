package board

import (
	"os/exec"
	"sync"
	"time"
)

// inflight are the actions running beside the board (approve, cancel,
// ...). Quitting lets them finish, so that y then q still approves, and
// stops what is still running after a grace: nothing outlives the board.
type inflight struct {
	mu   sync.Mutex
	wg   sync.WaitGroup
	cmds map[*exec.Cmd]bool
	shut bool
}

// finishGrace is how long quitting waits for actions still running.
const finishGrace = 5 * time.Second

// run runs cmd as an action, unless the board is quitting.
func (f *inflight) run(cmd *exec.Cmd) error {
	f.mu.Lock()
	if f.shut {
		f.mu.Unlock()
		return errQuitting
	}
	if f.cmds == nil {
		f.cmds = map[*exec.Cmd]bool{}
	}
	err := cmd.Start()
	if err == nil {
		f.cmds[cmd] = true
		f.wg.Add(1)
	}
	f.mu.Unlock()
	if err != nil {
		return err
	}
	defer f.wg.Done()
	err = cmd.Wait()
	f.mu.Lock()
	delete(f.cmds, cmd)
	f.mu.Unlock()
	return err
}

// finish waits up to grace for the actions still running, then kills them
// and waits for them to be gone.
func (f *inflight) finish(grace time.Duration) {
	f.mu.Lock()
	f.shut = true
	f.mu.Unlock()
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	f.mu.Lock()
	for cmd := range f.cmds {
		_ = cmd.Process.Kill()
	}
	f.mu.Unlock()
	<-done
}
