package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/file"
	gitproto "github.com/go-git/go-git/v5/plumbing/transport/git"
)

// refUpdate is one compare-and-swap of a remote ref: it happens only if the
// ref still has Old (zero: does not exist).
type refUpdate struct {
	Name     plumbing.ReferenceName
	Old, New plumbing.Hash
	// Objects are the objects New needs that the remote lacks.
	Objects []plumbing.Hash
}

// packSent, when set (by benchmarks), learns the size of each pack pushed.
var packSent func(bytes int)

// errStale is a compare-and-swap the remote refused: a ref had changed.
var errStale = errors.New("the remote ref changed meanwhile")

// wire is the conversation with one remote. Every push is atomic: all of
// its updates happen or none.
type wire interface {
	// refs lists the remote's refs under refs/kandev/.
	refs(ctx context.Context) (map[plumbing.ReferenceName]plumbing.Hash, error)
	// fetch brings the objects of the named refs (at the given values) into
	// the store; haves are commits the store already holds.
	fetch(ctx context.Context, want map[plumbing.ReferenceName]plumbing.Hash, haves []plumbing.Hash) error
	push(ctx context.Context, ups []refUpdate) error
	// pushDecided pushes what decide returns from the refs the remote has
	// at that moment (an empty list: nothing); over go-git both happen in
	// one connection, which is what keeps a claim to one round trip.
	pushDecided(ctx context.Context, decide func(refs map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error)) error
}

func (s *store) wire(url string, timeout time.Duration) wire {
	var w wire = &goGitWire{url: url, s: s}
	if viaGitCommand(url) {
		w = &gitWire{url: url, gitDir: s.gitDir()}
	}
	if timeout <= 0 {
		return w
	}
	return deadlineWire{w: w, url: url, after: timeout}
}

const refsPrefix = "refs/kandev/"

// goGitWire speaks the git protocol through go-git.
type goGitWire struct {
	url string
	s   *store
}

func (w *goGitWire) endpoint() (*transport.Endpoint, transport.Transport, error) {
	ep, err := transport.NewEndpoint(w.url)
	if err != nil {
		return nil, nil, fmt.Errorf("remote %s: %w", WithoutSecret(w.url), err)
	}
	// Only the transports go-git is used for (viaGitCommand): go-git's
	// transport/client would link its http and ssh clients (x/crypto/ssh)
	// into every kandev command as well.
	switch ep.Protocol {
	case "file":
		return ep, file.DefaultClient, nil
	case "git":
		return ep, gitproto.DefaultClient, nil
	}
	return nil, nil, fmt.Errorf("remote %s: unsupported scheme %q", WithoutSecret(w.url), ep.Protocol)
}

func (w *goGitWire) refs(ctx context.Context) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	ep, c, err := w.endpoint()
	if err != nil {
		return nil, err
	}
	sess, err := c.NewUploadPackSession(ep, nil)
	if err != nil {
		return nil, remoteErr(w.url, err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return map[plumbing.ReferenceName]plumbing.Hash{}, nil
	}
	if err != nil {
		return nil, remoteErr(w.url, err)
	}
	out := map[plumbing.ReferenceName]plumbing.Hash{}
	for name, h := range ar.References {
		if strings.HasPrefix(name, refsPrefix) {
			out[plumbing.ReferenceName(name)] = h
		}
	}
	return out, nil
}

func (w *goGitWire) fetch(ctx context.Context, want map[plumbing.ReferenceName]plumbing.Hash, haves []plumbing.Hash) error {
	var wants []plumbing.Hash
	for _, h := range want {
		if _, err := w.s.objs.EncodedObject(plumbing.AnyObject, h); err != nil {
			wants = append(wants, h)
		}
	}
	if len(wants) == 0 {
		return nil
	}
	ep, c, err := w.endpoint()
	if err != nil {
		return err
	}
	sess, err := c.NewUploadPackSession(ep, nil)
	if err != nil {
		return remoteErr(w.url, err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return remoteErr(w.url, err)
	}
	// A ref that moved since it was listed is fetched again after a new look.
	advertised := map[plumbing.Hash]bool{}
	for _, h := range ar.References {
		advertised[h] = true
	}
	for _, h := range wants {
		if !advertised[h] {
			return fmt.Errorf("fetch from %s: %w", WithoutSecret(w.url), errStale)
		}
	}
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	if ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	req.Wants = wants
	for _, h := range haves {
		if _, err := w.s.objs.EncodedObject(plumbing.CommitObject, h); err == nil {
			req.Haves = append(req.Haves, h)
		}
	}
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		if strings.Contains(err.Error(), "not our ref") {
			return fmt.Errorf("fetch from %s: %w", WithoutSecret(w.url), errStale)
		}
		return remoteErr(w.url, err)
	}
	defer resp.Close()
	r := active(ctx, resp)
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		r = sideband.NewDemuxer(sideband.Sideband64k, r)
	case req.Capabilities.Supports(capability.Sideband):
		r = sideband.NewDemuxer(sideband.Sideband, r)
	}
	if err := packfile.UpdateObjectStorage(w.s.objs, r); err != nil {
		return fmt.Errorf("fetch from %s: %w", WithoutSecret(w.url), err)
	}
	return nil
}

func (w *goGitWire) push(ctx context.Context, ups []refUpdate) error {
	return w.pushDecided(ctx, func(map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error) { return ups, nil })
}

func (w *goGitWire) pushDecided(ctx context.Context, decide func(map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error)) error {
	ep, c, err := w.endpoint()
	if err != nil {
		return err
	}
	sess, err := c.NewReceivePackSession(ep, nil)
	if err != nil {
		return remoteErr(w.url, err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return remoteErr(w.url, err)
	}
	if ar == nil {
		return fmt.Errorf("remote %s: no reference advertisement", WithoutSecret(w.url))
	}
	refs := map[plumbing.ReferenceName]plumbing.Hash{}
	for name, h := range ar.References {
		if strings.HasPrefix(name, refsPrefix) {
			refs[plumbing.ReferenceName(name)] = h
		}
	}
	ups, err := decide(refs)
	if err != nil || len(ups) == 0 {
		return err
	}
	if len(ups) > 1 && !ar.Capabilities.Supports(capability.Atomic) {
		return fmt.Errorf("remote %s does not support atomic pushes (git 2.4 or newer needed)", WithoutSecret(w.url))
	}
	// Refuse before sending objects when a ref already differs; the
	// server checks again under its ref lock, which is what makes it atomic.
	for _, u := range ups {
		cur, ok := ar.References[u.Name.String()]
		if (ok && cur != u.Old) || (!ok && !u.Old.IsZero()) {
			return fmt.Errorf("%s: %w", u.Name, errStale)
		}
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	if len(ups) > 1 {
		_ = req.Capabilities.Set(capability.Atomic)
	}
	var objs []plumbing.Hash
	for _, u := range ups {
		req.Commands = append(req.Commands, &packp.Command{Name: u.Name, Old: u.Old, New: u.New})
		objs = append(objs, u.Objects...)
	}
	var pack bytes.Buffer
	if _, err := packfile.NewEncoder(&pack, w.s.objs, false).Encode(objs, 10); err != nil {
		return fmt.Errorf("pack for %s: %w", WithoutSecret(w.url), err)
	}
	if packSent != nil {
		packSent(pack.Len())
	}
	req.Packfile = io.NopCloser(active(ctx, &pack))
	if ep.Protocol == "file" {
		// go-git SIGKILLs a local git-receive-pack whose context ends, and one
		// killed while it holds the refs' locks leaves their lock files in
		// the remote: every later update of those refs, from any machine, is
		// refused. Past its deadline the caller is answered at once all the
		// same (deadlineWire); this git is left to finish or fail on its own
		// as a network remote's would.
		ctx = context.WithoutCancel(ctx)
	}
	if _, err := sess.ReceivePack(ctx, req); err != nil {
		if refusedAsStale(err.Error()) {
			return fmt.Errorf("push to %s: %w (%v)", WithoutSecret(w.url), errStale, err)
		}
		return remoteErr(w.url, err)
	}
	return nil
}

// refusedAsStale reads a receive-pack refusal: a ref that no longer has the
// expected value (git says it several ways), or the other updates of an
// atomic push that one such refusal cancelled.
func refusedAsStale(msg string) bool {
	for _, s := range []string{"failed to update ref", "cannot lock ref", "failed to lock", "atomic transaction failed", "atomic push failed", "stale info", "but expected", "already exists", "reference already exists"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func remoteErr(url string, err error) error {
	return fmt.Errorf("remote %s: %w", WithoutSecret(url), err)
}

// gitWire runs git itself, for the remotes go-git cannot reach the way
// the user's git does (see viaGitCommand): git's credential helpers, ssh
// config and askpass all apply. It works on the same object store; the
// fetched refs land under refs/kandev-fetched/ there.
type gitWire struct {
	url, gitDir string
}

func (w *gitWire) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + w.gitDir}, args...)...)
	// Never prompt: kandev may run unattended. Credentials come from helpers.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	// Past the deadline git is killed; its ssh may still hold the pipes.
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = strings.TrimSpace(msg[i+1:])
		}
		if errors.Is(err, exec.ErrNotFound) {
			msg = "git is not installed (it is needed for " + scheme(w.url) + " remotes)"
		}
		return out, fmt.Errorf("git %s %s: %s", args[0], WithoutSecret(w.url), msg)
	}
	return out, nil
}

func (w *gitWire) refs(ctx context.Context) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	out, err := w.run(ctx, "ls-remote", w.url, refsPrefix+"*")
	if err != nil {
		return nil, err
	}
	refs := map[plumbing.ReferenceName]plumbing.Hash{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		h, name, ok := strings.Cut(sc.Text(), "\t")
		if ok && strings.HasPrefix(name, refsPrefix) {
			refs[plumbing.ReferenceName(name)] = plumbing.NewHash(h)
		}
	}
	return refs, nil
}

func (w *gitWire) fetch(ctx context.Context, want map[plumbing.ReferenceName]plumbing.Hash, _ []plumbing.Hash) error {
	if len(want) == 0 {
		return nil
	}
	args := []string{"fetch", "--no-tags", "--no-write-fetch-head", "--quiet", w.url}
	for name := range want {
		args = append(args, "+"+name.String()+":refs/kandev-fetched/"+strings.TrimPrefix(name.String(), refsPrefix))
	}
	if _, err := w.run(ctx, args...); err != nil {
		if strings.Contains(err.Error(), "not our ref") || strings.Contains(err.Error(), "couldn't find remote ref") {
			return fmt.Errorf("fetch from %s: %w", WithoutSecret(w.url), errStale)
		}
		return err
	}
	return nil
}

func (w *gitWire) pushDecided(ctx context.Context, decide func(map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error)) error {
	refs, err := w.refs(ctx)
	if err != nil {
		return err
	}
	ups, err := decide(refs)
	if err != nil || len(ups) == 0 {
		return err
	}
	return w.push(ctx, ups)
}

func (w *gitWire) push(ctx context.Context, ups []refUpdate) error {
	args := []string{"push", "--atomic", "--porcelain", "--quiet", w.url}
	for _, u := range ups {
		old := ""
		if !u.Old.IsZero() {
			old = u.Old.String()
		}
		args = append(args, "--force-with-lease="+u.Name.String()+":"+old)
	}
	for _, u := range ups {
		args = append(args, u.New.String()+":"+u.Name.String())
	}
	out, err := w.run(ctx, args...)
	if err != nil {
		if bytes.Contains(out, []byte("[rejected]")) || refusedAsStale(string(out)+err.Error()) {
			return fmt.Errorf("push to %s: %w", WithoutSecret(w.url), errStale)
		}
		return err
	}
	return nil
}
