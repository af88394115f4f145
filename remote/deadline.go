package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrTimeout: the remote did not answer within [sync] timeout_seconds (exit 1).
var ErrTimeout = errors.New("the remote did not answer in time")

// TimeoutError names the remote that stopped answering.
type TimeoutError struct {
	URL   string
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("remote %s did not answer within %s ([sync] timeout_seconds): try again once it answers, or raise the timeout", WithoutSecret(e.URL), e.After)
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// errDeadline is the cause of a conversation's context that ran out of time.
var errDeadline = errors.New("sync deadline")

// deadlineWire gives each conversation with the remote its own deadline:
// it ends when the remote has sent or taken nothing for that long (packs
// that keep flowing over go-git push the deadline on; the git command is
// bounded as a whole). The conversation runs on its own goroutine so that
// even a call that does not watch its context (go-git dials without one)
// cannot hold the command past it; go-git's reads and writes and the git
// command do watch it, and end soon after.
type deadlineWire struct {
	w     wire
	url   string
	after time.Duration
}

// activityKey holds, in a conversation's context, what moves its deadline on.
type activityKey struct{}

// active reads r, moving the conversation's deadline on with every read
// that brought bytes.
func active(ctx context.Context, r io.Reader) io.Reader {
	if f, ok := ctx.Value(activityKey{}).(func()); ok {
		return activeReader{r: r, kick: f}
	}
	return r
}

type activeReader struct {
	r    io.Reader
	kick func()
}

func (a activeReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.kick()
	}
	return n, err
}

func (d deadlineWire) do(ctx context.Context, op func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(d.after, func() { cancel(errDeadline) })
	defer timer.Stop()
	ctx = context.WithValue(ctx, activityKey{}, func() { timer.Reset(d.after) })
	done := make(chan error, 1)
	go func() { done <- op(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	if err != nil && errors.Is(context.Cause(ctx), errDeadline) {
		return &TimeoutError{URL: d.url, After: d.after}
	}
	return err
}

func (d deadlineWire) refs(ctx context.Context) (refs map[plumbing.ReferenceName]plumbing.Hash, err error) {
	var out map[plumbing.ReferenceName]plumbing.Hash
	err = d.do(ctx, func(ctx context.Context) error {
		r, err := d.w.refs(ctx)
		out = r
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d deadlineWire) fetch(ctx context.Context, want map[plumbing.ReferenceName]plumbing.Hash, haves []plumbing.Hash) error {
	return d.do(ctx, func(ctx context.Context) error { return d.w.fetch(ctx, want, haves) })
}

func (d deadlineWire) push(ctx context.Context, ups []refUpdate) error {
	return d.do(ctx, func(ctx context.Context) error { return d.w.push(ctx, ups) })
}

func (d deadlineWire) pushDecided(ctx context.Context, decide func(map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error)) error {
	return d.do(ctx, func(ctx context.Context) error { return d.w.pushDecided(ctx, decide) })
}
