package commands

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/kandev/kandev/state"
)

// ttlSeconds is the value of --ttl. It takes its word as given, so a
// negative number ("--ttl -1", which means the default) is a value and not a
// flag, and a number too large for any integer type is still "over the
// limit" rather than a parse error: the limit is checked before conversion.
type ttlSeconds int64

// Decode reads the word after --ttl (or after "--ttl="). Kong reports its
// errors as "--ttl: ..." usage errors.
func (t *ttlSeconds) Decode(ctx *kong.DecodeContext) error {
	tok := ctx.Scan.Pop()
	if tok.IsEOL() {
		return fmt.Errorf("expected a number of seconds")
	}
	word := fmt.Sprint(tok.Value)
	n, err := strconv.ParseInt(word, 10, 64)
	var ne *strconv.NumError
	switch {
	case errors.As(err, &ne) && ne.Err == strconv.ErrRange && !strings.HasPrefix(word, "-"):
		return fmt.Errorf("%s is over the limit of %d seconds", word, state.MaxTTLSeconds)
	case errors.As(err, &ne) && ne.Err == strconv.ErrRange:
		n = -1 // negative, however large: the default
	case err != nil:
		return fmt.Errorf("%q is not a whole number of seconds", word)
	case n > state.MaxTTLSeconds:
		return fmt.Errorf("%d is over the limit of %d seconds", n, state.MaxTTLSeconds)
	}
	*t = ttlSeconds(n)
	return nil
}
