//go:build windows && wine

// Package wine lets a Windows test binary run under Wine 8 (Debian 12's),
// whose ntdll lacks what Go's os.RemoveAll tries first: deleting a file
// with POSIX semantics (FileDispositionInformationEx). Go falls back to
// the plain delete only for the status Windows gives, not for Wine's
// "not implemented", so every t.TempDir cleanup would fail. Importing this
// package turns the fallback on, the path Go takes on Windows versions and
// file systems without POSIX deletes. Test packages import it from a file
// built with -tags wine; linking it needs -ldflags=-checklinkname=0.
package wine

import _ "unsafe" // for go:linkname

//go:linkname deleteatFallback internal/syscall/windows.TestDeleteatFallback
var deleteatFallback bool

func init() { deleteatFallback = true }
