//go:build windows && wine

package acp

import _ "github.com/kandev/kandev/internal/wine" // see its doc
