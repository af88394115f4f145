//go:build windows && wine

package main

// A binary built for Wine (-tags wine, as .ci/wine/run builds it) turns on
// Go's plain-delete fallback that Wine's ntdll needs for os.RemoveAll (the
// demo removes its scratch home); see internal/wine.
import _ "github.com/kandev/kandev/internal/wine"
