package procstat

import (
	"slices"
	"testing"
)

func TestBelow_ListsTheTreeUnderAPidParentsFirst(t *testing.T) {
	tree := map[int][]int{1: {10, 20}, 10: {11, 12}, 12: {13}, 20: {21}, 99: {100}}
	for _, c := range []struct {
		pid  int
		want []int
	}{
		{1, []int{10, 20, 11, 12, 21, 13}},
		{10, []int{11, 12, 13}},
		{12, []int{13}},
		{13, nil},        // a leaf
		{5, nil},         // not in the tree
		{99, []int{100}}, // another tree is not walked into
	} {
		if got := Below(tree, c.pid); !slices.Equal(got, c.want) {
			t.Errorf("Below(%d) = %v, want %v", c.pid, got, c.want)
		}
	}
}
