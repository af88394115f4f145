package owner

import (
	"slices"
	"testing"
	"time"
)

func TestEvictions_ClosesTheLeastRecentlyUsedIdleOwnersOverTheBound(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 12, 1, 10, min, 0, 0, time.UTC) }
	pool := []Warm{
		{ID: "c", LastActivity: at(3), Idle: true},
		{ID: "a", LastActivity: at(1), Idle: true},
		{ID: "busy", LastActivity: at(0), Idle: false},
		{ID: "b", LastActivity: at(2), Idle: true},
	}
	for _, tc := range []struct {
		name string
		warm []Warm
		max  int
		want []string
	}{
		{"room left", pool[:2], 4, nil},
		{"exactly full: one goes", pool[:2], 2, []string{"a"}},
		{"full of four, max 4: the oldest idle, never the busy one", pool, 4, []string{"a"}},
		{"max 3: two go, oldest first", pool, 3, []string{"a", "b"}},
		{"max 2: every idle one (self and the busy one fill it)", pool, 2, []string{"a", "b", "c"}},
		{"max 1: every idle one", pool, 1, []string{"a", "b", "c"}},
		{"only busy owners: none can go", pool[2:3], 1, nil},
		{"empty pool", nil, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Evictions(tc.warm, tc.max); !slices.Equal(got, tc.want) {
				t.Fatalf("Evictions = %v, want %v", got, tc.want)
			}
		})
	}
}
