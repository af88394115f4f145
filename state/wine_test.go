//go:build windows && wine

package state

import _ "github.com/kandev/kandev/internal/wine" // see its doc
