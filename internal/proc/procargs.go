package proc

import (
	"bytes"
	"encoding/binary"
)

// parseProcArgs splits macOS's kern.procargs2 buffer: a native-endian int32
// argc, the executable path, NUL padding, argc arguments, then the
// environment, every string NUL-terminated, ended by an empty string.
// (Every platform kandev builds for is little-endian.)
func parseProcArgs(b []byte) (argv, env []string) {
	if len(b) < 4 {
		return nil, nil
	}
	argc := int(int32(binary.LittleEndian.Uint32(b)))
	rest := b[4:]
	// Skip the executable path and the NULs that pad it.
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		rest = rest[i:]
	} else {
		return nil, nil
	}
	rest = bytes.TrimLeft(rest, "\x00")
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			i = len(rest)
		}
		s := string(rest[:i])
		if i < len(rest) {
			rest = rest[i+1:]
		} else {
			rest = nil
		}
		switch {
		case len(argv) < argc:
			argv = append(argv, s)
		case s == "":
			return argv, env
		default:
			env = append(env, s)
		}
	}
	return argv, env
}
