package eventlog

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/internal/safefile"
	"github.com/kandev/kandev/internal/watch"
	"github.com/tidwall/gjson"
)

// stopPoll is how often Follow asks stop while nothing is written: an owner
// killed outright writes nothing that would wake it.
const stopPoll = 200 * time.Millisecond

// Size is the current length of the log at path (0 if missing): where a
// Follow that must see only what comes next starts.
func Size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// Follow calls fn for every complete event appended to the log at path at
// or after byte offset from, in order, until fn returns false, ctx ends, or
// stop returns true while no new data is waiting (stop is checked about
// every 200 ms). It wakes on file-change notifications, so a line is seen
// moments after it is written. It returns the offset just past the last
// line it read.
func Follow(ctx context.Context, path string, from int64, fn func(Event) bool, stop func() bool) (int64, error) {
	changes := watch.WatchFiles(path)
	defer changes.Close()
	var f *forward
	defer func() {
		if f != nil {
			f.r.(*os.File).Close()
		}
	}()
	off := from
	lastStop := time.Now()
	for {
		if f == nil {
			file, err := safefile.Open(path, os.O_RDONLY, 0)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return off, err
			}
			if err == nil {
				if _, err := file.Seek(from, io.SeekStart); err != nil {
					file.Close()
					return off, err
				}
				f = &forward{r: file, off: from}
			}
		}
		progressed := false
		if f != nil {
			stopped, err := f.read(func(at int64, block []byte) bool {
				progressed = true
				return eachLine(block, func(line []byte) bool {
					at += int64(len(line))
					off = at
					e, ok := DecodeEvent(line)
					return !ok || fn(e)
				})
			})
			if stopped || err != nil {
				return off, err
			}
		}
		if !progressed {
			if time.Since(lastStop) >= stopPoll {
				lastStop = time.Now()
				if stop != nil && stop() {
					return off, nil
				}
			}
			if err := changes.Wait(ctx, stopPoll); err != nil {
				return off, err
			}
		}
	}
}

// OffsetAfterSeq returns the byte offset just past the line of the event
// with seq (0 for seq <= 0; the end of the complete lines when seq is newer
// than the log), scanning the log forward.
func OffsetAfterSeq(path string, seq int64) (int64, error) {
	if seq <= 0 {
		return 0, nil
	}
	var off int64
	_, err := ScanLines(path, func(line []byte) bool {
		off += int64(len(line))
		n, ok := quickSeq(line)
		return !ok || n < seq // a line that is no readable event is passed over, as readers do
	})
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	return off, err
}

// quickSeq is the seq of a log line when it is written as a whole number
// from 1 to MaxSeq, read without decoding the line.
func quickSeq(line []byte) (int64, bool) {
	v := gjson.GetBytes(line, "seq")
	if v.Type != gjson.Number || v.Raw == "" || len(v.Raw) > 16 || strings.Trim(v.Raw, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Raw, 10, 64)
	return n, err == nil && ValidSeq(n)
}
