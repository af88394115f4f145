package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/kandev/kandev/internal/safefile"
)

// forward is the one forward reader of JSONL: it reads r front to back and
// hands out blocks of whole lines, keeping a partial last line for the next
// read. Lines and Blocks read a stream to its end; Follow keeps one forward
// reader across the log's growth. Reading from the end is ScanBackward.
type forward struct {
	r   io.Reader
	buf []byte // a partial line read past the last whole line handed out, then free space
	off int64  // the offset in r of buf[0]
}

// read hands fn blocks of whole lines (valid until fn returns) with the
// offset of each block's first byte, until r has no more to give for now
// (io.EOF) or fn returns false (stopped). The buffer grows only for a line
// longer than it.
func (f *forward) read(fn func(off int64, block []byte) bool) (stopped bool, err error) {
	if cap(f.buf) == 0 {
		f.buf = make([]byte, 0, 64<<10)
	}
	for {
		if len(f.buf) == cap(f.buf) { // one line longer than the buffer
			f.buf = append(f.buf, 0)[:len(f.buf)]
		}
		n, rerr := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
		f.buf = f.buf[:len(f.buf)+n]
		if i := bytes.LastIndexByte(f.buf[len(f.buf)-n:], '\n'); i >= 0 { // only the new bytes can end a line
			end := len(f.buf) - n + i + 1
			more := fn(f.off, f.buf[:end])
			f.off += int64(end)
			f.buf = f.buf[:copy(f.buf, f.buf[end:])]
			if !more {
				return true, nil
			}
		}
		switch {
		case rerr == io.EOF:
			return false, nil
		case rerr != nil:
			return false, rerr
		}
	}
}

// Lines calls fn with each line of r, front to back, newline included; an
// unterminated last line comes last, without one (a log's torn tail, the
// end of a stream). line is valid only during the call; fn returning false
// stops the read.
func Lines(r io.Reader, fn func(line []byte) bool) error {
	bp := lineBufs.Get().(*[]byte)
	f := forward{r: r, buf: (*bp)[:0]}
	defer func() {
		if cap(f.buf) <= 1<<20 { // a buffer grown for a huge line is left to the GC
			*bp = f.buf[:0]
			lineBufs.Put(bp)
		}
	}()
	stopped, err := f.read(func(_ int64, block []byte) bool { return eachLine(block, fn) })
	if err == nil && !stopped && len(f.buf) > 0 {
		fn(f.buf[:len(f.buf):len(f.buf)])
	}
	return err
}

// lineBufs are the buffers of Lines, reused across logs (a usage report
// scans thousands).
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// eachLine calls fn with each line of a block of whole lines; false when
// fn stopped.
func eachLine(block []byte, fn func(line []byte) bool) bool {
	for len(block) > 0 {
		i := bytes.IndexByte(block, '\n')
		if !fn(block[: i+1 : i+1]) { // an append to line copies it, never overwrites the next

			return false
		}
		block = block[i+1:]
	}
	return true
}

// openLog opens the log at path for reading; a missing log is ErrNotFound.
func openLog(path string) (*os.File, error) {
	f, err := safefile.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("event log %s: %w", path, ErrNotFound)
	}
	return f, err
}

// ReadLogBlocks reads the event log at path front to back in blocks of whole
// lines and calls fn with each (valid until fn returns): for readers that
// search the bytes of thousands of logs without splitting them into lines.
// buf, when it has room, is the buffer to read into; the one returned serves
// the next call. An unterminated last line is not passed to fn; its length is
// returned. fn returning false stops the read. A missing log is ErrNotFound.
func ReadLogBlocks(path string, buf []byte, fn func(block []byte) bool) (_ []byte, tornBytes int64, err error) {
	file, err := openLog(path)
	if err != nil {
		return buf, 0, err
	}
	defer file.Close()
	if cap(buf) == 0 {
		buf = make([]byte, 0, 1<<20)
	}
	f := forward{r: file, buf: buf[:0]}
	stopped, err := f.read(func(_ int64, block []byte) bool { return fn(block) })
	if err != nil {
		return f.buf, 0, fmt.Errorf("read %s: %w", path, err)
	}
	if stopped {
		return f.buf, 0, nil
	}
	return f.buf, int64(len(f.buf)), nil
}
