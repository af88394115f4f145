package commands

import (
	"context"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/state"
)

// Pruning also asks each agent that advertised session/delete (recorded in
// the session's capabilities) to delete its own copy of the pruned
// sessions: the agent is launched once per agent and directory, only for
// that, after kandev's files are gone. See docs/commands.md (prune).

// agentDeleteTimeout bounds one launch, its handshake and its deletions.
const agentDeleteTimeout = 30 * time.Second

// agentDelete is one launch: an agent, the directory it runs in, and the
// sessions (kandev ids, agent tokens) it is asked to delete.
type agentDelete struct {
	agent, dir string
	ids        []string
	tokens     []string
}

// agentDeletes groups the pruned sessions whose agent offers session/delete.
func agentDeletes(h *state.Home, all []*state.Session, pruned []string) []agentDelete {
	gone := map[string]bool{}
	for _, id := range pruned {
		gone[id] = true
	}
	byKey := map[[2]string]*agentDelete{}
	var keys [][2]string
	for _, s := range all {
		if !gone[s.ID] || s.ResumeToken == "" || !acp.DeleteAdvertised(s.Capabilities) {
			continue
		}
		dir := s.Cwd
		if st, err := os.Stat(dir); dir == "" || err != nil || !st.IsDir() {
			dir = h.Dir // its worktree went with it: agents find a session by its id
		}
		k := [2]string{s.Agent, dir}
		d := byKey[k]
		if d == nil {
			d = &agentDelete{agent: s.Agent, dir: dir}
			byKey[k] = d
			keys = append(keys, k)
		}
		d.ids = append(d.ids, s.ID)
		d.tokens = append(d.tokens, s.ResumeToken)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"\x00"+keys[i][1] < keys[j][0]+"\x00"+keys[j][1] })
	out := make([]agentDelete, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// deleteAgentSessions runs the launches; it returns the kandev ids whose
// agent session was deleted, with that agent, and one warning per launch
// that failed (the pruned sessions stay pruned either way).
func deleteAgentSessions(env *Env, h *state.Home, plans []agentDelete) (deleted map[string]string, warnings []string) {
	deleted = map[string]string{}
	if len(plans) == 0 {
		return deleted, nil
	}
	cfg, err := env.Config()
	if err != nil {
		return deleted, []string{"the agents' copies of the pruned sessions were not deleted: " + err.Error()}
	}
	profiles := map[string]acp.Profile{}
	for _, p := range acp.Profiles(cfg) {
		profiles[p.Name] = p
	}
	for _, d := range plans {
		p, ok := profiles[d.agent]
		if !ok || !p.Installed() {
			warnings = append(warnings, "agent "+d.agent+" is not configured or not installed: it keeps its copy of "+strconv.Itoa(len(d.ids))+" pruned session(s)")
			continue
		}
		ctx, cancel := context.WithTimeout(env.Ctx, agentDeleteTimeout)
		done, err := acp.DeleteSessions(ctx, p, h.Dir, d.dir, d.tokens)
		cancel()
		ok2 := map[string]bool{}
		for _, t := range done {
			ok2[t] = true
		}
		for i, t := range d.tokens {
			if ok2[t] {
				deleted[d.ids[i]] = d.agent
			}
		}
		if err != nil {
			warnings = append(warnings, "agent "+d.agent+" did not delete its copy of every pruned session: "+err.Error())
		}
	}
	return deleted, warnings
}
