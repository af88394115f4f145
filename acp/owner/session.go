package owner

import (
	"strings"
	"time"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// NewSessionRecord is the record of a session created now in cwd for agent,
// not yet written: the title defaults to the start of the prompt, the
// workspace to the git top level's name, and everything the user typed is
// kept redacted. Every command that creates a session builds it here.
func NewSessionRecord(now time.Time, cwd, agent, title, workspace, prompt string) *state.Session {
	now = now.UTC()
	s := &state.Session{
		ID: state.NewID(now), Cwd: cwd, Agent: agent, State: state.StateCreated,
		CreatedAt: now, LastActivityAt: now, Title: history.Redact(title), Workspace: workspace,
		InitialPrompt: history.Redact(prompt),
	}
	s.TaskID = s.ID
	s.TitleNamed = s.Title != ""
	if s.Title == "" {
		s.Title = TitleOf(history.Redact(prompt))
	}
	if wt, ok, _ := worktree.DetectWorktree(cwd); ok {
		wt.Valid = true
		s.Worktree = &wt
	}
	if s.Workspace == "" {
		s.Workspace = worktree.WorkspaceName(cwd)
	}
	return s
}

// TitleOf is a session title made of the first line of a prompt, cut at 60
// bytes on a character boundary.
func TitleOf(prompt string) string {
	t := strings.TrimSpace(strings.SplitN(prompt, "\n", 2)[0])
	if len(t) > 60 {
		t = t[:60]
		for len(t) > 0 && t[len(t)-1]&0xC0 == 0x80 {
			t = t[:len(t)-1]
		}
		t += "..."
	}
	return t
}
