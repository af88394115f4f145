package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kandev/kandev/internal/safefile"
)

// ReadLogBlocks reads the event log at path front to back in blocks of whole
// lines and calls fn with each (valid until fn returns): as many lines as
// fit in buf, which grows only for a line longer than it. The returned
// buffer serves the next call. An unterminated last line is not passed to
// fn; its length is returned. fn returning false stops the read. A missing
// log is ErrNotFound.
func ReadLogBlocks(path string, buf []byte, fn func(block []byte) bool) (_ []byte, tornBytes int64, err error) {
	f, err := safefile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return buf, 0, fmt.Errorf("event log %s: %w", path, ErrNotFound)
		}
		return buf, 0, err
	}
	defer f.Close()
	if cap(buf) == 0 {
		buf = make([]byte, 0, 1<<20)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) { // one line longer than the buffer
			buf = append(buf, 0)[:len(buf)]
		}
		n, rerr := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if i := bytes.LastIndexByte(buf[len(buf)-n:], '\n'); i >= 0 { // only the new bytes can end a line
			end := len(buf) - n + i + 1
			if !fn(buf[:end]) {
				return buf, 0, nil
			}
			buf = buf[:copy(buf, buf[end:])]
		}
		if rerr == io.EOF {
			return buf, int64(len(buf)), nil
		}
		if rerr != nil {
			return buf, 0, fmt.Errorf("read %s: %w", path, rerr)
		}
	}
}
