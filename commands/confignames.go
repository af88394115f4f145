package commands

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
)

// checkConfigNames refuses a config whose names point at nothing: a
// permission mode or a default agent that does not exist. The error names
// the file, the key and the valid values (and the nearest one), so a typo
// is found at once instead of at the first start.
func checkConfigNames(c *config.Config, path string) error {
	if m := c.Permissions.Mode; m != "" && !owner.ValidPermissionMode(m) {
		modes := []string{owner.PermAsk, owner.PermApproveReads, owner.PermApproveAll, owner.PermDenyAll, owner.PermDefer}
		return &config.ConfigError{Path: path, Problem: fmt.Sprintf("[permissions] mode = %q is not a permission mode%s; use %s",
			m, didYouMean(m, modes), strings.Join(modes, ", "))}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Agents)) {
		if rt := c.Agents[name].Runtime; rt != "" && rt != "process" && rt != config.RuntimeContainer {
			return &config.ConfigError{Path: path, Problem: fmt.Sprintf("[agents.%s] runtime = %q is no runtime%s; use process or container",
				name, rt, didYouMean(rt, []string{"process", config.RuntimeContainer}))}
		}
	}
	if a := c.DefaultAgent; a != "" {
		var names []string
		for _, p := range acp.Profiles(c) {
			if p.Name == a {
				return nil
			}
			names = append(names, p.Name)
		}
		sort.Strings(names)
		return &config.ConfigError{Path: path, Problem: fmt.Sprintf("default_agent = %q names no agent%s; known agents: %s (or add [agents.%s])",
			a, didYouMean(a, names), strings.Join(names, ", "), a)}
	}
	return nil
}

// didYouMean is `; did you mean "X"?` for the nearest of names within a
// third of word's length in edits, else "".
func didYouMean(word string, names []string) string {
	best, bestD := "", len(word)/3+1
	for _, n := range names {
		if d := editDistance(strings.ToLower(word), n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
