package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const (
	metaFile   = "kandev-session.json"
	recordFile = "record.json"
	logDir     = "log"
	// chunksPerBucket bounds the trees a push rewrites: one bucket of
	// chunk names and the log tree listing the buckets.
	chunksPerBucket = 256
	// snapshotFormat is the layout of a session commit's tree.
	snapshotFormat = 1
)

// Meta describes a session commit (kandev-session.json).
type Meta struct {
	Format   int    `json:"format"`
	ID       string `json:"id"`
	LogBytes int64  `json:"log_bytes"`
	LogLines int64  `json:"log_lines"`
	Origin   Origin `json:"origin"`
	Machine  string `json:"machine"`
}

// Origin is the repository a session worked in, to find the same one elsewhere.
type Origin struct {
	URL    string `json:"url,omitempty"`
	Branch string `json:"branch,omitempty"`
	// Rel is the session's cwd relative to the work tree's top level.
	Rel string `json:"rel,omitempty"`
}

// built is a commit made in the store and the objects a remote that has
// its parent lacks.
type built struct {
	commit  plumbing.Hash
	objects []plumbing.Hash
}

func (b *built) add(h plumbing.Hash) plumbing.Hash {
	b.objects = append(b.objects, h)
	return h
}

func (s *store) writeBlob(data []byte) (plumbing.Hash, error) {
	o := s.objs.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	w, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.objs.SetEncodedObject(o)
}

func (s *store) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	// git orders tree entries by name, a directory's name as if it ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	o := s.objs.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.objs.SetEncodedObject(o)
}

func (s *store) writeCommit(tree plumbing.Hash, parents []plumbing.Hash, msg, machine string, now time.Time) (plumbing.Hash, error) {
	sig := object.Signature{Name: "kandev", Email: "kandev@" + machine, When: now.UTC()}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: parents}
	o := s.objs.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.objs.SetEncodedObject(o)
}

// buildSession makes the commit after parent (zero: the first) that adds
// the log lines in appended (starting at line firstLine, 1-based) and holds
// record and meta. Only the new chunk, the record, the meta and the trees on
// their paths are new objects.
func (s *store) buildSession(parent plumbing.Hash, meta Meta, record, appended []byte, firstLine int64, now time.Time) (built, error) {
	var b built
	var buckets []object.TreeEntry
	var last []object.TreeEntry
	if !parent.IsZero() {
		logTree, err := s.logTree(parent)
		if err != nil {
			return b, err
		}
		buckets = append(buckets, logTree.Entries...)
		if n := len(buckets); n > 0 {
			t, err := object.GetTree(s.objs, buckets[n-1].Hash)
			if err != nil {
				return b, err
			}
			last = append(last, t.Entries...)
			buckets = buckets[:n-1]
		}
	}
	if len(appended) > 0 {
		chunk, err := s.writeBlob(appended)
		if err != nil {
			return b, err
		}
		if len(last) >= chunksPerBucket {
			lastTree, err := s.writeTree(last)
			if err != nil {
				return b, err
			}
			buckets = append(buckets, object.TreeEntry{Name: bucketName(len(buckets)), Mode: filemode.Dir, Hash: lastTree})
			last = nil
		}
		last = append(last, object.TreeEntry{Name: fmt.Sprintf("c%010d.jsonl", firstLine), Mode: filemode.Regular, Hash: b.add(chunk)})
	}
	if len(last) > 0 {
		lastTree, err := s.writeTree(last)
		if err != nil {
			return b, err
		}
		buckets = append(buckets, object.TreeEntry{Name: bucketName(len(buckets)), Mode: filemode.Dir, Hash: b.add(lastTree)})
	}
	logTree, err := s.writeTree(buckets)
	if err != nil {
		return b, err
	}
	metaJSON, _ := json.MarshalIndent(meta, "", "  ")
	metaBlob, err := s.writeBlob(append(metaJSON, '\n'))
	if err != nil {
		return b, err
	}
	recBlob, err := s.writeBlob(record)
	if err != nil {
		return b, err
	}
	root, err := s.writeTree([]object.TreeEntry{
		{Name: metaFile, Mode: filemode.Regular, Hash: b.add(metaBlob)},
		{Name: recordFile, Mode: filemode.Regular, Hash: b.add(recBlob)},
		{Name: logDir, Mode: filemode.Dir, Hash: b.add(logTree)},
	})
	if err != nil {
		return b, err
	}
	b.add(root)
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = []plumbing.Hash{parent}
	}
	msg := fmt.Sprintf("kandev session %s: %d events", meta.ID, meta.LogLines)
	c, err := s.writeCommit(root, parents, msg, meta.Machine, now)
	if err != nil {
		return b, err
	}
	b.commit = b.add(c)
	return b, nil
}

func bucketName(i int) string { return fmt.Sprintf("b%04d", i) }

// buildClaim makes the commit that stores c; its objects are new.
func (s *store) buildClaim(c Claim, now time.Time) (built, error) {
	var b built
	empty, err := s.writeTree(nil)
	if err != nil {
		return b, err
	}
	b.add(empty)
	h, err := s.writeCommit(empty, nil, string(c.encode()), c.Machine, now)
	if err != nil {
		return b, err
	}
	b.commit = b.add(h)
	return b, nil
}

// readClaim decodes the claim commit h (which the store must hold).
func (s *store) readClaim(h plumbing.Hash) (*Claim, error) {
	c, err := object.GetCommit(s.objs, h)
	if err != nil {
		return nil, err
	}
	return decodeClaim(c.Message)
}

func (s *store) logTree(commit plumbing.Hash) (*object.Tree, error) {
	c, err := object.GetCommit(s.objs, commit)
	if err != nil {
		return nil, err
	}
	root, err := c.Tree()
	if err != nil {
		return nil, err
	}
	e, err := root.FindEntry(logDir)
	if err != nil {
		return nil, fmt.Errorf("session commit %s has no log: %w", commit, err)
	}
	return object.GetTree(s.objs, e.Hash)
}

// snapshotOf is a session commit as read back: its meta and record.
type snapshotOf struct {
	Commit plumbing.Hash
	Meta   Meta
	Record []byte
}

func (s *store) readSnapshot(commit plumbing.Hash) (*snapshotOf, error) {
	c, err := object.GetCommit(s.objs, commit)
	if err != nil {
		return nil, err
	}
	root, err := c.Tree()
	if err != nil {
		return nil, err
	}
	read := func(name string) ([]byte, error) {
		f, err := root.File(name)
		if err != nil {
			return nil, fmt.Errorf("session commit %s: %s: %w", commit, name, err)
		}
		r, err := f.Reader()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}
	mb, err := read(metaFile)
	if err != nil {
		return nil, err
	}
	snap := &snapshotOf{Commit: commit}
	if err := json.Unmarshal(mb, &snap.Meta); err != nil {
		return nil, fmt.Errorf("session commit %s: %s: %w", commit, metaFile, err)
	}
	if snap.Meta.Format > snapshotFormat {
		return nil, fmt.Errorf("session commit %s was written by a newer kandev (format %d)", commit, snap.Meta.Format)
	}
	if snap.Record, err = read(recordFile); err != nil {
		return nil, err
	}
	return snap, nil
}

// logFrom returns the commit's log from byte offset from to its end, at
// most bound bytes (a *PullBoundError past it). Each chunk's size is read
// from its object header before it is inflated, so a chunk that inflates
// far beyond what was fetched (or one named by many tree entries) is
// refused before it takes any memory.
func (s *store) logFrom(commit plumbing.Hash, from, bound int64) ([]byte, error) {
	lt, err := s.logTree(commit)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	var pos int64
	for _, be := range lt.Entries {
		bt, err := object.GetTree(s.objs, be.Hash)
		if err != nil {
			return nil, err
		}
		for _, ce := range bt.Entries {
			if !strings.HasSuffix(ce.Name, ".jsonl") {
				continue
			}
			blob, err := object.GetBlob(s.objs, ce.Hash)
			if err != nil {
				return nil, err
			}
			if pos+blob.Size <= from {
				pos += blob.Size
				continue
			}
			if bound > 0 && pos+blob.Size-from > bound {
				return nil, &PullBoundError{Bound: bound, Over: pos + blob.Size - from}
			}
			if err := readChunk(&out, blob, max(from-pos, 0)); err != nil {
				return nil, err
			}
			pos += blob.Size
		}
	}
	return out.Bytes(), nil
}

// readChunk appends blob's bytes from skip on to out, never more than its
// header said.
func readChunk(out *bytes.Buffer, blob *object.Blob, skip int64) error {
	r, err := blob.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := io.CopyN(io.Discard, r, skip); err != nil {
		return err
	}
	_, err = io.Copy(out, io.LimitReader(r, blob.Size-skip))
	return err
}

// descends reports whether commit has ancestor among its ancestors (or is it).
func (s *store) descends(commit, ancestor plumbing.Hash) (bool, error) {
	if ancestor.IsZero() {
		return true, nil
	}
	for h := commit; ; {
		if h == ancestor {
			return true, nil
		}
		c, err := object.GetCommit(s.objs, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if len(c.ParentHashes) == 0 {
			return false, nil
		}
		h = c.ParentHashes[0]
	}
}
