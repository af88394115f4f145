package commands

import "time"

// textTimeLayout is the one way text output shows a moment: local time to
// the second, with its zone (JSON keeps RFC 3339 in UTC).
const textTimeLayout = "2006-01-02 15:04:05 MST"

// textTime is t as text output shows it.
func textTime(t time.Time) string { return t.Local().Format(textTimeLayout) }

// textTimestamp is a stored RFC 3339 timestamp as text output shows it; one
// that does not parse is shown as stored.
func textTimestamp(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return textTime(t)
}
