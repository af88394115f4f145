package state

import (
	"testing"
	"unsafe"
)

func TestZZSize(t *testing.T) {
	t.Logf("Session %d Assessment %d", unsafe.Sizeof(Session{}), unsafe.Sizeof(Assessment{}))
}
