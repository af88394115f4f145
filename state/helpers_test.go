package state

import "errors"

func isErr(err, target error) bool { return errors.Is(err, target) }

func asLease(err error, target **LeaseHeldError) bool { return errors.As(err, target) }
