package e2e_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// claudeSessionFiles are the files under Claude's config directory named
// after session token.
func (r *claudeRig) claudeSessionFiles(token string) []string {
	var out []string
	_ = filepath.WalkDir(r.configDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), token) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestClaude_PruneAsksClaudeToDeleteItsCopyOfThePrunedSession(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	id, res := r.start("--agent", "claude", "remember the word MANGO")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	token := r.session(id).ResumeToken
	if len(r.claudeSessionFiles(token)) == 0 {
		t.Fatalf("Claude keeps no file for session %s", token)
	}
	r.mustRun("done", id)
	var out struct {
		AgentSessionsDeleted []string `json:"agent_sessions_deleted"`
	}
	began := time.Now()
	decodeJSON(t, r.mustRun("--json", "prune").stdout, &out)
	took := time.Since(began)
	if len(out.AgentSessionsDeleted) != 1 || out.AgentSessionsDeleted[0] != id {
		t.Fatalf("prune did not have Claude delete its copy: %+v", out)
	}
	if left := r.claudeSessionFiles(token); len(left) != 0 {
		t.Fatalf("Claude's files for the pruned session are still there: %v", left)
	}
	r.assertNoAgentSurvives("prune exited")
	t.Logf("prune with one Claude launch for session/delete took %v", took)
}
