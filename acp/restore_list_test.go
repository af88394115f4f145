package acp

import (
	"errors"
	"testing"
)

func TestClassifyWithList_AnInconclusiveRestoreErrorIsUnknownOnlyWhenTheAgentsListLacksTheSession(t *testing.T) {
	listing := Capabilities{Resume: true, Load: true, List: true}
	cases := []struct {
		name   string
		class  ErrorClass
		caps   Capabilities
		listed bool
		err    error
		want   ErrorClass
		asked  bool
	}{
		{"not listed: gone", ClassOther, listing, false, nil, ClassUnknownSession, true},
		{"listed: the agent failed, keep the token", ClassOther, listing, true, nil, ClassOther, true},
		{"the list failed too: inconclusive", ClassOther, listing, false, errors.New("boom"), ClassOther, true},
		{"no session/list advertised", ClassOther, Capabilities{Resume: true}, false, nil, ClassOther, false},
		{"transport is never reclassified", ClassTransport, listing, false, nil, ClassTransport, false},
		{"auth is never reclassified", ClassAuth, listing, false, nil, ClassAuth, false},
		{"already unknown", ClassUnknownSession, listing, true, nil, ClassUnknownSession, false},
		{"method not found", ClassMethodNotFound, listing, false, nil, ClassMethodNotFound, false},
	}
	for _, tc := range cases {
		asked := false
		got := ClassifyWithList(tc.class, tc.caps, func() (bool, error) { asked = true; return tc.listed, tc.err })
		if got != tc.want || asked != tc.asked {
			t.Errorf("%s: got %s (list asked %v), want %s (asked %v)", tc.name, got, asked, tc.want, tc.asked)
		}
	}
}
