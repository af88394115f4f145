package commands

import "testing"

func TestAttach_FirstOfLastTurns(t *testing.T) {
	starts := []int{0, 4, 9} // three turns in 12 events
	cases := []struct{ n, want int }{{0, 12}, {1, 9}, {2, 4}, {3, 0}, {10, 0}}
	for _, tc := range cases {
		if got := firstOfLastTurns(starts, 12, tc.n); got != tc.want {
			t.Errorf("last %d turns start at %d, want %d", tc.n, got, tc.want)
		}
	}
	if got := firstOfLastTurns(nil, 0, 0); got != 0 {
		t.Errorf("empty log: %d", got)
	}
}
