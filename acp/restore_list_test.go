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
		{"not listed: gone", ErrOther, listing, false, nil, ErrUnknownSession, true},
		{"listed: the agent failed, keep the token", ErrOther, listing, true, nil, ErrOther, true},
		{"the list failed too: inconclusive", ErrOther, listing, false, errors.New("boom"), ErrOther, true},
		{"no session/list advertised", ErrOther, Capabilities{Resume: true}, false, nil, ErrOther, false},
		{"transport is never reclassified", ErrTransport, listing, false, nil, ErrTransport, false},
		{"auth is never reclassified", ErrAuth, listing, false, nil, ErrAuth, false},
		{"already unknown", ErrUnknownSession, listing, true, nil, ErrUnknownSession, false},
		{"method not found", ErrMethodNotFound, listing, false, nil, ErrMethodNotFound, false},
	}
	for _, tc := range cases {
		asked := false
		got := ClassifyWithList(tc.class, tc.caps, func() (bool, error) { asked = true; return tc.listed, tc.err })
		if got != tc.want || asked != tc.asked {
			t.Errorf("%s: got %s (list asked %v), want %s (asked %v)", tc.name, got, asked, tc.want, tc.asked)
		}
	}
}
