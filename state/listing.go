package state

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kandev/kandev/internal/safefile"
	"github.com/tidwall/gjson"
)

// listReport says which records a listing left out: those a newer kandev
// wrote, and those that do not load for another reason (corrupt JSON,
// unreadable, ...), by id. A record removed while listing is neither.
type listReport struct {
	Newer       int // how many
	NewerFormat int // the highest format among them
	Unreadable  []UnreadableRecord
	// Leases are the ids whose lease file was in the directory when it was
	// listed: a lease comes and goes with attach and detach, like a record
	// with create and delete, so a listing reads the leases it saw and no
	// other (a lease file is never there for most sessions).
	Leases map[string]bool
}

// UnreadableRecord is a session record on disk that does not load: its id
// comes from the file name.
type UnreadableRecord struct {
	ID      string `json:"id"`
	Problem string `json:"problem"`
}

// listSessionsReport is ListSessions, and what it left out.
func (h *Home) listSessionsReport() ([]*Session, listReport, error) {
	return h.ListSessionsWhere(nil)
}

// ListSessionsWhere is listSessionsReport of the sessions whose state keep
// accepts (nil: all). A valid record whose state keep refuses is read only
// as far as its state, id and format, so the report says the same of every
// record as listSessionsReport's does: a listing that shows only some
// states (list --resumable, --state) decodes only those sessions.
func (h *Home) ListSessionsWhere(keep func(state string) bool) ([]*Session, listReport, error) {
	type loaded struct {
		id  string
		s   *Session
		err error
	}
	all, leases, err := scanRecords(h, func(id string, b []byte, err error) (loaded, bool) {
		if keep != nil && err == nil {
			if st := gjson.GetBytes(b, "state"); st.Type == gjson.String && !keep(st.Str) && refusable(id, b) {
				return loaded{}, false
			}
		}
		s, err := h.recordFrom(id, b, err)
		if err == nil && keep != nil && !keep(s.State) {
			return loaded{}, false
		}
		return loaded{id, s, err}, !errors.Is(err, ErrNotFound) // removed while listing: not there
	})
	if err != nil {
		return nil, listReport{}, err
	}
	rep := listReport{Leases: leases}
	out := make([]*Session, 0, len(all))
	for _, l := range all {
		var nf *NewerFormatError
		switch {
		case l.err == nil:
			out = append(out, l.s)
		case errors.As(l.err, &nf):
			rep.Newer++
			rep.NewerFormat = max(rep.NewerFormat, nf.Format)
		default:
			rep.Unreadable = append(rep.Unreadable, UnreadableRecord{ID: l.id, Problem: l.err.Error()})
		}
	}
	slices.SortFunc(rep.Unreadable, func(a, b UnreadableRecord) int { return strings.Compare(b.ID, a.ID) })
	SortByActivity(out)
	return out, rep, nil
}

// listBatch is how many directory entries one read hands to the readers.
const listBatch = 256

// scanRecords reads every session record in the sessions directory and
// keeps what fn makes of each (fn's b is the file, or err why it could not
// be read; b is only valid during the call), in no order. It also returns
// the ids that have a lease file. This is the one path of the commands
// that read thousands of sessions (list, --latest, usage, search): the
// records are read on every core while the directory is still being read,
// since reading a large directory is a tenth of the work and need not wait
// for, nor be waited for by, the records; and each is opened by name in the
// open directory, which spares walking the home's path once per file.
func scanRecords[T any](h *Home, fn func(id string, b []byte, err error) (T, bool)) ([]T, map[string]bool, error) {
	d, err := os.Open(h.sessionsDir())
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	dirfd, dirPath := int(d.Fd()), h.sessionsDir()
	batches := make(chan []string, 4)
	readers := make([]*recordReader[T], 0, min(runtime.GOMAXPROCS(0), 8)+1)
	newReader := func() *recordReader[T] {
		r := &recordReader[T]{dirfd: dirfd, dirPath: dirPath, fn: fn}
		readers = append(readers, r)
		return r
	}
	var wg sync.WaitGroup
	var readErr error
	for first := true; ; first = false {
		names, err := d.Readdirnames(listBatch) // unsorted and unstat'ed: callers sort
		if first && len(names) < listBatch {
			// A small home (the directory fits in one batch) is read here:
			// a reader goroutine would cost a thread more than it saves.
			newReader().readNames(names)
			names = nil
		}
		if len(names) > 0 {
			if len(readers) < cap(readers) { // one more reader while there is work for it
				r := newReader()
				wg.Go(func() {
					for names := range batches {
						r.readNames(names)
					}
				})
			}
			batches <- names
		}
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
	}
	close(batches)
	wg.Wait()
	if readErr != nil {
		return nil, nil, readErr
	}
	out, leases := mergeReaders(readers)
	return out, leases, nil
}

// recordReader reads the records named in batches of one open sessions
// directory, keeping what fn makes of each and the ids that have a lease
// file; one goroutine uses it, with one buffer for all its reads.
type recordReader[T any] struct {
	dirfd   int
	dirPath string
	fn      func(id string, b []byte, err error) (T, bool)
	out     []T
	leases  []string
	buf     []byte
}

// readNames reads the records among names (lease files are noted, other
// files skipped).
func (r *recordReader[T]) readNames(names []string) {
	for _, name := range names {
		id, ok := strings.CutSuffix(name, ".json")
		if !ok {
			continue
		}
		if lease, ok := strings.CutSuffix(id, leaseSuffix); ok {
			r.leases = append(r.leases, lease)
			continue
		}
		if ValidateID(id) != nil { // not temp files
			continue
		}
		var err error
		r.buf, err = safefile.ReadRecordFile(r.dirfd, r.dirPath, name, r.buf[:0])
		if v, keep := r.fn(id, r.buf, err); keep {
			r.out = append(r.out, v)
		}
	}
}

// mergeReaders is what every reader kept, and the set of leased ids (nil
// when there is none).
func mergeReaders[T any](readers []*recordReader[T]) ([]T, map[string]bool) {
	var out []T
	var leases map[string]bool
	for _, r := range readers {
		out = append(out, r.out...)
		for _, id := range r.leases {
			if leases == nil {
				leases = map[string]bool{}
			}
			leases[id] = true
		}
	}
	return out, leases
}

// refusable says whether a record of session id whose state a listing
// refuses can be passed over without decoding it whole: it is valid JSON
// in a format this kandev reads, its id is its file name, and its state
// reads the same decoded whole (no escapes, and one state key).
func refusable(id string, b []byte) bool {
	if !gjson.ValidBytes(b) {
		return false
	}
	f := gjson.GetManyBytes(b, "format", "id", "state")
	plain := func(r gjson.Result) bool { return r.Type == gjson.String && !strings.ContainsRune(r.Raw, '\\') }
	return f[0].Type == gjson.Number && f[0].Int() <= Format && plain(f[1]) && f[1].Str == id && plain(f[2]) &&
		bytes.Count(b, []byte(`"state"`)) == 1
}
