//go:build unix

package supervise

import (
	"strings"
	"testing"
	"time"
)

func TestReadStopRequest_OnlyAWellFormedRequestIsAStop(t *testing.T) {
	for _, tc := range []struct {
		pipe string
		want time.Duration
		ok   bool
	}{
		{StopRequest + "500\n", 500 * time.Millisecond, true},
		{StopRequest + "0", 0, true},
		{"", 0, false}, // EOF alone: the owner died
		{StopRequest + "-1\n", 0, false},
		{StopRequest + "12x\n", 0, false},
		{"stop\n", 0, false},
		{StopRequest + "500\n" + strings.Repeat("x", 1000), 0, false}, // more than a request: not one
	} {
		got, ok := readStopRequest(strings.NewReader(tc.pipe))
		if got != tc.want || ok != tc.ok {
			t.Errorf("readStopRequest(%q) = %v, %v; want %v, %v", tc.pipe, got, ok, tc.want, tc.ok)
		}
	}
}
