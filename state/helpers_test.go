package state

import (
	"errors"

	"github.com/kandev/kandev/eventlog"
)

func isErr(err, target error) bool { return errors.Is(err, target) }

func asLease(err error, target **leaseHeldError) bool { return errors.As(err, target) }

// backChunk is the block of eventlog's backward reads, which the tests of
// long lines cross.
const backChunk = 64 << 10

func roundCost(v float64) float64 { return eventlog.Cost{Amount: v}.Rounded().Amount }
