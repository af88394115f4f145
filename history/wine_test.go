//go:build windows && wine

package history

import _ "github.com/kandev/kandev/internal/wine" // see its doc
