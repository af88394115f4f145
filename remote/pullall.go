package remote

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/safefile"
	"github.com/kandev/kandev/state"
)

// PullAll pulls every session on the remote of the clone the command runs
// in (or --remote); with dryRun it only says what it would do, listing
// the sessions that exist only there.
func PullAll(ctx context.Context, e Env, dryRun bool) (_ []*Result, failed []error, _ error) {
	e, s, err := e.fill()
	if err != nil {
		return nil, nil, err
	}
	url, err := resolveURL(e.Config, nil, nil, e.Opt.Dir, e.Opt.Remote)
	if err != nil {
		return nil, nil, err
	}
	w := s.wire(url, e.Opt.Timeout)
	refs, err := w.refs(ctx)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	want := map[plumbing.ReferenceName]plumbing.Hash{}
	var haves []plumbing.Hash
	for name, h := range refs {
		id, ok := strings.CutPrefix(name.String(), refsPrefix+"sessions/")
		if !ok || state.ValidateID(id) != nil {
			continue
		}
		sy, _ := s.readSynced(id)
		if sy != nil && sy.URL == WithoutSecret(url) && sy.Commit == h.String() {
			continue // nothing new
		}
		ids = append(ids, id)
		want[name] = h
		if o := refs[ownerRef(id)]; !o.IsZero() {
			want[ownerRef(id)] = o
		}
		if sy != nil && sy.Commit != "" {
			haves = append(haves, plumbing.NewHash(sy.Commit))
		}
	}
	sort.Strings(ids)
	// One fetch for all of them: one round trip, one pack.
	if err := w.fetch(ctx, want, haves); err != nil {
		return nil, nil, err
	}
	// Each pull is a few fsyncs of small files: several at once overlap them.
	results := make([]*Result, len(ids))
	errs := make([]error, len(ids))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(8, len(ids)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				sy, _ := s.readSynced(ids[i])
				l := newLink(s, ids[i], url, sy, e.Opt)
				l.w = w
				results[i], errs[i] = l.pull(ctx, refs, dryRun, false)
			}
		})
	}
	wg.Wait()
	var out []*Result
	var only []RemoteSession
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	for _, r := range results {
		if r != nil {
			out = append(out, r)
			if r.Session != nil {
				only = append(only, *r.Session)
			}
		}
	}
	if dryRun {
		// What list shows as existing only there, until the next look.
		b, _ := json.MarshalIndent(only, "", "  ")
		if err := safefile.WriteFileAtomic(filepath.Join(s.dir, "remote-only.json"), append(b, '\n')); err != nil {
			return out, failed, err
		}
	}
	return out, failed, nil
}

func (l *link) remoteSession(v view) *RemoteSession {
	l.s.objMu.Lock()
	snap, err := l.s.readSnapshot(v.sess)
	l.s.objMu.Unlock()
	if err != nil {
		return nil
	}
	var rec state.Session
	if json.Unmarshal(snap.Record, &rec) != nil {
		return nil
	}
	rec = history.RedactSession(rec)
	return &RemoteSession{ID: l.id, Title: rec.Title, Agent: rec.Agent, Workspace: rec.Workspace, State: rec.State, LastActivityAt: rec.LastActivityAt, Remote: l.shown}
}

// RemoteOnly lists the sessions the last pull --all --dry-run found only
// on the remote and that this machine still does not have (no network).
func RemoteOnly(h *state.Home) []RemoteSession {
	b, err := os.ReadFile(filepath.Join(h.Dir, "sync", "remote-only.json"))
	if err != nil {
		return nil
	}
	var all, out []RemoteSession
	if json.Unmarshal(b, &all) != nil {
		return nil
	}
	for _, r := range all {
		if _, err := os.Stat(h.RecordPath(r.ID)); errors.Is(err, os.ErrNotExist) {
			out = append(out, r)
		}
	}
	return out
}
