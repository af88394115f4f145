package history

import (
	"slices"
	"sort"
)

// Transcript page sizes (kandev transcript --limit).
const (
	DefaultPageLimit = 200
	MaxPageLimit     = 1000
)

// Page returns the newest limit entries that start before sequence before
// (before <= 0: from the end), oldest first, whether older entries remain, and
// the before value that fetches the next older page (0 when none remain).
// Following nextBefore from before = 0 visits every entry exactly once.
//
// entries are Assemble's output. The cursor is on StartSequence, which strictly
// increases; for entries that do not interleave this is the same as "Sequence <
// before", and when a late tool result stretched an older entry past a newer
// one, it still never skips or repeats an entry. limit <= 0 means
// DefaultPageLimit; more than MaxPageLimit means MaxPageLimit.
func Page(entries []Entry, before int64, limit int) (page []Entry, hasOlder bool, nextBefore int64) {
	if limit <= 0 {
		limit = DefaultPageLimit
	}
	limit = min(limit, MaxPageLimit)
	end := len(entries)
	if before > 0 {
		end = sort.Search(len(entries), func(i int) bool { return entries[i].StartSequence >= before })
	}
	start := max(0, end-limit)
	page = slices.Clone(entries[start:end])
	if start > 0 {
		return page, true, entries[start].StartSequence
	}
	return page, false, 0
}
